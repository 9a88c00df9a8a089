// The log-softmax normalizer of raw logits, shared by ember::logprobs and beam search: a
// token's natural-log probability is logit - log_normalizer(logits), computed in double.
#pragma once

#include <span>

namespace ember::sampling {

/// log(sum(exp(logits))), computed stably in double. Throws ember::Error, prefixed with `who`,
/// for empty logits, a NaN or +INFINITY logit, or all logits -INFINITY.
double log_normalizer(std::span<const float> logits, const char* who);

}  // namespace ember::sampling

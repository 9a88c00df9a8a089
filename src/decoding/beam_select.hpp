// One step of beam search's selection: the best `beams` extensions of the live hypotheses by
// sum of log-probabilities, ties to the lower token id, then to the earlier hypothesis.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ember/types.hpp"

namespace ember::decoding {

/// Hypothesis `hyp` followed by `token`, with its sum of log-probabilities.
struct Extension {
    double logprob = 0.0;
    Token token = 0;
    std::int32_t hyp = 0;
};

/// Whether a ranks ahead of b: higher sum, then lower token id, then earlier hypothesis.
bool ahead(const Extension& a, const Extension& b) noexcept;

/// The best min(beams, extensions) extensions, best first, of hypotheses with sums `logprob`
/// whose next-token logits are logits(h) (raw; log-softmax at temperature 1). `row` is a
/// reused buffer. Throws ember::Error for logits log-softmax rejects (NaN, +INFINITY, all
/// -INFINITY).
std::vector<Extension> select_beams(std::span<const double> logprob,
                                    const std::function<std::span<const float>(std::size_t)>& logits,
                                    std::size_t beams, std::vector<Extension>& row);

}  // namespace ember::decoding

// Whether a draft model may propose tokens for a target: the token ids must mean the same.
#pragma once

#include <string>

#include "tokenizer/tokenizer.hpp"

namespace ember::speculative {

/// Most tokens a vocabulary may have beyond the other's (llama.cpp allows 128: padding).
inline constexpr std::int64_t kMaxVocabPadding = 128;

/// Throws ember::Error unless every id below the smaller vocabulary size has the same text and
/// type in both, and the larger vocabulary adds at most kMaxVocabPadding tokens, all of type
/// unused (padding). The message names `draft_name`, `target_name` and the first difference.
void check_vocab_match(const tokenizer::Tokenizer& draft, const tokenizer::Tokenizer& target,
                       const std::string& draft_name, const std::string& target_name);

}  // namespace ember::speculative

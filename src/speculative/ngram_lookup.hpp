// Prompt lookup (Saxena 2023; llama.cpp's lookup, Hugging Face's prompt_lookup_num_tokens): guess
// the next tokens of a sequence from its own earlier text. The last n tokens are searched for
// earlier in the sequence; what followed that occurrence is the guess.
#pragma once

#include <span>
#include <vector>

#include "ember/types.hpp"

namespace ember::speculative {

/// Appends to `out` up to `max` tokens guessed to follow `context`: for n = max_ngram down to 1,
/// the latest earlier occurrence of the last n tokens of `context` wins, and the guess is what
/// followed it, reading on through the guess itself when the occurrence is close to the end
/// (so a repeating pattern is continued for all `max` tokens). Returns how many were appended
/// (0 when no n-gram recurs).
int lookup_ngram(std::span<const Token> context, int max_ngram, int max, std::vector<Token>& out);

}  // namespace ember::speculative

// Whole-grammar checks and summaries used after parsing: left recursion, the fingerprint that
// identifies a grammar in saved states, and GBNF printing.
#pragma once

#include <cstdint>

#include "grammar/grammar.hpp"

namespace ember::grammar {

/// Throws ember::Error naming the cycle ("a -> b -> a") when a rule can reach itself without
/// consuming input (directly, or through rules that can match the empty string). A matcher
/// that expands such a rule would never stop.
void check_left_recursion(const Grammar& g);

/// FNV-1a over the rules, elements, classes and root.
std::uint64_t fingerprint(const Grammar& g);

}  // namespace ember::grammar

// Pieces of the JSON Schema to GBNF conversion (json_schema.cpp): GBNF quoting, numeric ranges
// and regex patterns. Each returns a GBNF expression (parenthesized where it has alternatives)
// and throws ember::Error for what it cannot express.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ember::grammar {

/// `text` (UTF-8) as a GBNF string literal, quotes included.
std::string gbnf_literal(std::string_view text);

/// Most digits in the integer part of a generated number (llama.cpp's integral-part limit).
inline constexpr int kMaxIntegerDigits = 16;

struct Bound {
    std::int64_t value = 0;
    bool exclusive = false;
};

/// The decimal integers (no leading zeros, '-' for negatives) in the range; a missing bound is
/// open. Throws when the range is empty or a bound has more than kMaxIntegerDigits - 1 digits.
std::string integer_range(std::optional<Bound> lo, std::optional<Bound> hi);

/// JSON numbers without exponent (integer part, optional fraction) in the range, for integer
/// bounds. Throws when the range is empty.
std::string number_range(std::optional<Bound> lo, std::optional<Bound> hi);

/// The JSON string content (without the quotes, escaped as JSON requires) of the strings that
/// match the ECMA-262 regex `pattern` (JSON Schema semantics: a search, unless anchored with
/// ^ and $). Supports literals, escapes (\d \w \s and their negations, \t \n \r \f \v \0 \xHH
/// \uHHHH, escaped punctuation), `.`, classes with ranges and negation, groups (capturing and
/// (?:...)), `|`, and the quantifiers * + ? {m} {m,} {m,n} (lazy forms too). Other features
/// (backreferences, lookaround, \b, \p, anchors inside the pattern) throw, naming the offset.
std::string pattern_content(std::string_view pattern);

}  // namespace ember::grammar

// JSON for the chat templates (and the JSON Schema converter): values are nlohmann-json's
// ordered_json (objects keep insertion order, as Python dicts do). parse() wraps nlohmann's
// parser with ember's errors and a nesting bound; dump() writes exactly what Python's
// json.dumps writes (transformers' tojson), which nlohmann's own dump() does not (separators
// ", " and ": ", Python's float repr, NaN/Infinity).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ember::json {

using Value = nlohmann::ordered_json;

/// Deepest nesting parse() accepts.
inline constexpr int kMaxDepth = 512;

/// Deepest [ / { nesting of a JSON text (strings skipped), computed without recursion.
int nesting_depth(std::string_view text) noexcept;

/// One past the ] or } that closes the [ or { at `start` (strings skipped; nothing else
/// checked), or npos when the text ends first.
std::size_t bracket_end(std::string_view text, std::size_t start) noexcept;

/// Parses RFC 8259 JSON (UTF-8). Integers stay integers (past int64: unsigned, then double);
/// a duplicate key keeps the last value in the first key's place (as Python). Throws
/// ember::Error "JSON: line L, column C: ..." on bad input, "JSON: number overflow ..." for a
/// number past double's range, and for nesting deeper than kMaxDepth.
Value parse(std::string_view text);

/// Python json.dumps(value, ensure_ascii=False): separators ", " and ": " without indent,
/// "," and ": " with indent >= 0 (newline + indent spaces per level). Floats use Python's repr.
std::string dump(const Value& value, int indent = -1);

/// Appends a JSON string literal (quotes included) as json.dumps(ensure_ascii=False) writes it.
void append_quoted(std::string& out, std::string_view text);

/// Python's repr() of a float ("1.0", "0.1", "1e+16", "1e-05", "inf", "nan").
std::string python_float_repr(double value);

}  // namespace ember::json

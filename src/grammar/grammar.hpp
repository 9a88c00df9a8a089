// A compiled GBNF grammar: every rule as a flat run of elements, the way llama.cpp lays out
// llama_grammar_rules, with character classes stored once as sorted, disjoint, positive code
// point ranges (negated classes are complemented at compile time, so matching never negates).
//
// Layout: rule r occupies elements [rule_start[r], ...): its alternatives, each a sequence of
// `chr`, `cls` and `rule_ref` elements, separated by `alt` and closed by `end`.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ember::grammar {

enum class Op : std::uint8_t {
    end,       ///< End of the rule's last alternative.
    alt,       ///< End of an alternative; another follows.
    rule_ref,  ///< value = rule index.
    chr,       ///< value = one code point.
    cls,       ///< value = index into Grammar::classes.
};

struct Element {
    Op op = Op::end;
    std::uint32_t value = 0;
};

inline bool is_terminal(Op op) noexcept { return op == Op::chr || op == Op::cls; }
inline bool ends_sequence(Op op) noexcept { return op == Op::end || op == Op::alt; }

/// A set of code points: sorted, disjoint, non-adjacent inclusive ranges, plus an ASCII bitmap.
struct CharClass {
    std::vector<std::pair<char32_t, char32_t>> ranges;
    std::array<std::uint64_t, 2> ascii{};

    bool contains(char32_t cp) const noexcept {
        if (cp < 128) return (ascii[cp >> 6] >> (cp & 63)) & 1u;
        // Few ranges in practice; a binary search keeps hostile classes cheap too.
        std::size_t lo = 0, hi = ranges.size();
        while (lo < hi) {
            const std::size_t mid = (lo + hi) / 2;
            if (ranges[mid].second < cp) lo = mid + 1;
            else hi = mid;
        }
        return lo < ranges.size() && ranges[lo].first <= cp;
    }
    /// True when some code point in [lo, hi] is in the class.
    bool intersects(char32_t lo, char32_t hi) const noexcept;
};

struct Grammar {
    std::vector<Element> elements;
    std::vector<std::uint32_t> rule_start;  ///< Per rule: index of its first element.
    std::vector<std::string> rule_names;    ///< Per rule; generated rules are "name_N".
    std::vector<CharClass> classes;
    /// Per rule r: its alternatives start at elements alt_starts[alt_offset[r] .. alt_offset[r + 1]).
    std::vector<std::uint32_t> alt_offset;
    std::vector<std::uint32_t> alt_starts;
    std::uint32_t root = 0;
    /// FNV-1a over the elements and classes: identifies the grammar in saved sampler states.
    std::uint64_t fingerprint = 0;

    /// Whether element `e` (a terminal) accepts code point `cp`.
    bool matches(const Element& e, char32_t cp) const noexcept {
        return e.op == Op::chr ? e.value == cp : classes[e.value].contains(cp);
    }
    /// Whether element `e` (a terminal) accepts some code point in [lo, hi].
    bool may_match(const Element& e, char32_t lo, char32_t hi) const noexcept {
        return e.op == Op::chr ? (lo <= e.value && e.value <= hi) : classes[e.value].intersects(lo, hi);
    }
};

/// Bounds on what a grammar may cost; exceeding one is an ember::Error naming the bound.
struct Limits {
    std::size_t max_text_bytes = 8u << 20;     ///< GBNF source size.
    std::size_t max_elements = 1u << 21;       ///< Elements after expanding repetitions.
    std::size_t max_rules = 1u << 18;          ///< Rules, generated ones included.
    int max_nesting = 200;                     ///< Depth of nested parentheses.
    std::uint32_t max_repetition = 100000;     ///< Largest m or n in {m,n}.
};

/// Parses GBNF text (llama.cpp's grammar format) into a grammar whose start rule is `root`.
/// Throws ember::Error "grammar: line L, column C: ..." for syntax errors, and names the rule
/// for an undefined rule, a rule defined twice, a missing root, left recursion, or a bound of
/// `limits` that is exceeded.
Grammar parse_gbnf(std::string_view text, const Limits& limits = {});

/// GBNF text for a compiled grammar (one rule per line; for messages and tests).
std::string to_gbnf(const Grammar& g);

}  // namespace ember::grammar

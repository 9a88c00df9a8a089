// GBNF text -> Grammar. The syntax is llama.cpp's (grammars/README.md): `name ::= alternatives`
// rules ending at a newline, "literals", [classes] with ranges and ^, `.`, (groups), `*` `+` `?`
// `{m}` `{m,}` `{m,n}`, escapes \x \u \U \t \r \n \\ \" \[ \] \-, `#` comments, and newlines
// allowed after `|` and inside parentheses. Repetitions are expanded into rules as llama.cpp
// does (S{m,n} = S x m, then a chain of n-m optional rules), after wrapping a multi-element S
// into a rule of its own so that the expansion stays linear in n.
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "grammar/grammar.hpp"
#include "grammar/grammar_checks.hpp"
#include "runtime/fail.hpp"

namespace ember::grammar {
namespace {

bool is_word_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

using Rule = std::vector<Element>;

class Parser {
public:
    Parser(std::string_view text, const Limits& limits) : text_(text), limits_(limits) {}

    Grammar run() {
        if (text_.size() > limits_.max_text_bytes) {
            fail("grammar: " + std::to_string(text_.size()) + " bytes is more than the limit of " +
                 std::to_string(limits_.max_text_bytes));
        }
        if (const auto nul = text_.find('\0'); nul != std::string_view::npos) error_at(nul, "NUL byte");
        skip_space(true);
        if (at_end()) fail("grammar: empty grammar (it needs a 'root' rule)");
        while (!at_end()) parse_rule();
        return finish();
    }

private:
    struct Symbol {
        std::string name;
        bool defined = false;
        bool generated = false;
        std::size_t first_use = 0;  ///< Byte offset of the first reference (for errors).
    };

    // ---- errors and positions ------------------------------------------------------------

    [[noreturn]] void error_at(std::size_t offset, const std::string& what) const {
        std::size_t line = 1, column = 1;
        for (std::size_t i = 0; i < offset && i < text_.size(); ++i) {
            const auto c = static_cast<unsigned char>(text_[i]);
            if (c == '\n') {
                ++line;
                column = 1;
            } else if ((c & 0xC0) != 0x80) {
                ++column;  // count code points, not continuation bytes
            }
        }
        fail("grammar: line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
             what);
    }
    [[noreturn]] void error(const std::string& what) const { error_at(pos_, what); }

    bool at_end() const noexcept { return pos_ >= text_.size(); }
    char peek(std::size_t k = 0) const noexcept {
        return pos_ + k < text_.size() ? text_[pos_ + k] : '\0';
    }
    std::string describe_here() const {
        if (at_end()) return "end of input";
        const char c = peek();
        if (c == '\n' || c == '\r') return "end of line";
        return std::string("'") + c + "'";
    }

    // ---- lexing ----------------------------------------------------------------------------

    void skip_space(bool newline_ok) {
        while (!at_end()) {
            const char c = peek();
            if (c == ' ' || c == '\t') {
                ++pos_;
            } else if (c == '#') {
                while (!at_end() && peek() != '\n' && peek() != '\r') ++pos_;
            } else if (newline_ok && (c == '\n' || c == '\r')) {
                ++pos_;
            } else {
                break;
            }
        }
    }

    std::string_view parse_name() {
        const std::size_t start = pos_;
        while (!at_end() && is_word_char(peek())) ++pos_;
        if (pos_ == start) error("expected a rule name, found " + describe_here());
        return text_.substr(start, pos_ - start);
    }

    std::uint32_t parse_int(const char* what) {
        const std::size_t start = pos_;
        std::uint64_t v = 0;
        while (!at_end() && is_digit(peek())) {
            v = v * 10 + static_cast<std::uint64_t>(peek() - '0');
            if (v > limits_.max_repetition) {
                error_at(start, std::string(what) + " is larger than the limit of " +
                                    std::to_string(limits_.max_repetition));
            }
            ++pos_;
        }
        if (pos_ == start) error(std::string("expected ") + what + ", found " + describe_here());
        return static_cast<std::uint32_t>(v);
    }

    std::uint32_t parse_hex(int digits) {
        std::uint32_t v = 0;
        for (int i = 0; i < digits; ++i) {
            const char c = peek();
            int d;
            if (c >= '0' && c <= '9') d = c - '0';
            else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
            else error("expected " + std::to_string(digits) + " hex digits in an escape");
            v = (v << 4) | static_cast<std::uint32_t>(d);
            ++pos_;
        }
        if (v > 0x10FFFF) error("escape names code point " + std::to_string(v) + ", past U+10FFFF");
        return v;
    }

    // One character of a literal or class: an escape or one UTF-8 encoded code point.
    char32_t parse_char() {
        if (at_end()) error("unexpected end of input");
        const auto lead = static_cast<unsigned char>(peek());
        if (lead == '\\') {
            const std::size_t at = pos_;
            pos_ += 2;
            switch (text_.size() > at + 1 ? text_[at + 1] : '\0') {
                case 'x': return parse_hex(2);
                case 'u': return parse_hex(4);
                case 'U': return parse_hex(8);
                case 't': return '\t';
                case 'r': return '\r';
                case 'n': return '\n';
                case '\\': case '"': case '[': case ']': case '-': case '^':
                    return static_cast<unsigned char>(text_[at + 1]);
                default: error_at(at, "unknown escape (known: \\x \\u \\U \\t \\r \\n \\\\ \\\" \\[ \\] \\-)");
            }
        }
        if (lead == '\n' || lead == '\r') error("unexpected end of line inside a literal or class");
        int n = 0;
        char32_t cp = 0;
        if (lead < 0x80) { n = 1; cp = lead; }
        else if (lead >= 0xC2 && lead <= 0xDF) { n = 2; cp = lead & 0x1F; }
        else if (lead >= 0xE0 && lead <= 0xEF) { n = 3; cp = lead & 0x0F; }
        else if (lead >= 0xF0 && lead <= 0xF4) { n = 4; cp = lead & 0x07; }
        else error("invalid UTF-8");
        for (int i = 1; i < n; ++i) {
            const auto c = static_cast<unsigned char>(peek(static_cast<std::size_t>(i)));
            if ((c & 0xC0) != 0x80) error("invalid UTF-8");
            cp = (cp << 6) | (c & 0x3F);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
            error("invalid UTF-8");
        }
        pos_ += static_cast<std::size_t>(n);
        return cp;
    }

    // ---- symbols and rules ---------------------------------------------------------------

    std::uint32_t symbol(std::string_view name, std::size_t use_at) {
        auto [it, inserted] = ids_.try_emplace(std::string(name), 0u);
        if (inserted) {
            it->second = new_rule_id(std::string(name), false);
            symbols_[it->second].first_use = use_at;
        }
        return it->second;
    }

    std::uint32_t new_rule_id(std::string name, bool generated) {
        if (rules_.size() >= limits_.max_rules) {
            error("more than " + std::to_string(limits_.max_rules) + " rules (limit)");
        }
        rules_.emplace_back();
        symbols_.push_back({std::move(name), generated, generated, pos_});
        return static_cast<std::uint32_t>(rules_.size() - 1);
    }

    std::uint32_t generated_rule(const std::string& base) {
        return new_rule_id(base + "_" + std::to_string(rules_.size()), true);
    }

    void reserve_elements(std::uint64_t n) {
        n_elements_ += n;
        if (n_elements_ > limits_.max_elements) {
            error("the grammar grows past " + std::to_string(limits_.max_elements) +
                  " elements (limit; repetitions are expanded)");
        }
    }
    void push(Rule& rule, Element e) {
        reserve_elements(1);
        rule.push_back(e);
    }

    void parse_rule() {
        const std::size_t name_at = pos_;
        const std::string name(parse_name());
        skip_space(false);
        if (!(peek() == ':' && peek(1) == ':' && peek(2) == '=')) {
            error("expected '::=' after rule name '" + name + "', found " + describe_here());
        }
        pos_ += 3;
        skip_space(true);
        const std::uint32_t id = symbol(name, name_at);
        if (symbols_[id].defined) error_at(name_at, "rule '" + name + "' is defined twice");
        symbols_[id].defined = true;
        parse_alternates(name, id, false, 0);
        if (peek() == '\r') {
            pos_ += peek(1) == '\n' ? 2 : 1;
        } else if (peek() == '\n') {
            ++pos_;
        } else if (!at_end()) {
            error("expected end of line after rule '" + name + "', found " + describe_here());
        }
        skip_space(true);
    }

    void parse_alternates(const std::string& rule_name, std::uint32_t id, bool nested, int depth) {
        Rule rule;
        parse_sequence(rule_name, rule, nested, depth);
        while (peek() == '|') {
            ++pos_;
            push(rule, {Op::alt, 0});
            skip_space(true);
            parse_sequence(rule_name, rule, nested, depth);
        }
        push(rule, {Op::end, 0});
        rules_[id] = std::move(rule);
    }

    void parse_sequence(const std::string& rule_name, Rule& rule, bool nested, int depth) {
        std::size_t last_sym_start = rule.size();
        while (!at_end()) {
            const char c = peek();
            if (c == '"') {
                const std::size_t quote_at = pos_;
                ++pos_;
                last_sym_start = rule.size();
                while (peek() != '"') {
                    if (at_end() || peek() == '\n' || peek() == '\r') error_at(quote_at, "unterminated string literal");
                    push(rule, {Op::chr, parse_char()});
                }
                ++pos_;  // "" emits nothing (and leaves nothing to repeat)
                skip_space(nested);
            } else if (c == '[') {
                last_sym_start = rule.size();
                push(rule, parse_class());
                skip_space(nested);
            } else if (is_word_char(c)) {
                const std::size_t at = pos_;
                const std::uint32_t ref = symbol(parse_name(), at);
                last_sym_start = rule.size();
                push(rule, {Op::rule_ref, ref});
                skip_space(nested);
            } else if (c == '(') {
                if (depth + 1 > limits_.max_nesting) {
                    error("parentheses nested deeper than " + std::to_string(limits_.max_nesting) +
                          " (limit)");
                }
                const std::size_t open_at = pos_;
                ++pos_;
                skip_space(true);
                const std::uint32_t sub = generated_rule(rule_name);
                parse_alternates(rule_name, sub, true, depth + 1);
                if (peek() != ')') {
                    if (at_end()) error_at(open_at, "unclosed '('");
                    error("expected ')', found " + describe_here());
                }
                ++pos_;
                last_sym_start = rule.size();
                push(rule, {Op::rule_ref, sub});
                skip_space(nested);
            } else if (c == '.') {
                ++pos_;
                last_sym_start = rule.size();
                push(rule, {Op::cls, any_class()});
                skip_space(nested);
            } else if (c == '*' || c == '+' || c == '?') {
                const std::size_t at = pos_;
                ++pos_;
                skip_space(nested);
                repeat(rule_name, rule, last_sym_start, c == '+' ? 1 : 0, c == '?' ? 1 : -1, at);
            } else if (c == '{') {
                const std::size_t at = pos_;
                ++pos_;
                skip_space(nested);
                const std::uint32_t lo = parse_int("a repetition count");
                skip_space(nested);
                std::int64_t hi = lo;
                if (peek() == ',') {
                    ++pos_;
                    skip_space(nested);
                    hi = is_digit(peek()) ? static_cast<std::int64_t>(parse_int("a repetition count")) : -1;
                    skip_space(nested);
                }
                if (peek() != '}') error("expected '}' to close the repetition, found " + describe_here());
                ++pos_;
                skip_space(nested);
                if (hi >= 0 && hi < lo) error_at(at, "repetition {m,n} with n < m");
                repeat(rule_name, rule, last_sym_start, lo, hi, at);
            } else {
                break;
            }
        }
    }

    // Rewrites the symbol rule[last_sym_start..] as S{min,max} (max < 0: unbounded):
    //   S{m,n} -> S (m times) R1,  Rk ::= S R(k+1) | ,  R(n-m) ::= S |
    //   S{m,}  -> S (m times) R,   R ::= S R |
    void repeat(const std::string& rule_name, Rule& rule, std::size_t last_sym_start,
                std::int64_t min, std::int64_t max, std::size_t at) {
        if (last_sym_start >= rule.size()) error_at(at, "repetition operator without a preceding item");
        Rule sym(rule.begin() + static_cast<std::ptrdiff_t>(last_sym_start), rule.end());
        rule.resize(last_sym_start);
        n_elements_ -= sym.size();
        const std::int64_t n_opt = max < 0 ? 1 : max - min;
        if (sym.size() > 1 && min + n_opt > 1) {  // share one copy of a multi-element item
            const std::uint32_t wrap = generated_rule(rule_name);
            reserve_elements(sym.size() + 1);
            sym.push_back({Op::end, 0});
            rules_[wrap] = std::move(sym);
            sym = {{Op::rule_ref, wrap}};
        }
        reserve_elements(static_cast<std::uint64_t>(min) * sym.size() +
                         static_cast<std::uint64_t>(n_opt) * (sym.size() + 3) + 1);
        for (std::int64_t i = 0; i < min; ++i) rule.insert(rule.end(), sym.begin(), sym.end());
        std::uint32_t last_rec = 0;
        for (std::int64_t i = 0; i < n_opt; ++i) {
            const std::uint32_t rec = generated_rule(rule_name);
            Rule body = sym;
            if (max < 0) body.push_back({Op::rule_ref, rec});
            else if (i > 0) body.push_back({Op::rule_ref, last_rec});
            body.push_back({Op::alt, 0});
            body.push_back({Op::end, 0});
            rules_[rec] = std::move(body);
            last_rec = rec;
        }
        if (n_opt > 0) rule.push_back({Op::rule_ref, last_rec});
        // last_sym_start is unchanged: a following operator repeats the whole expansion.
    }

    Element parse_class() {
        const std::size_t open_at = pos_;
        ++pos_;  // '['
        bool negated = false;
        if (peek() == '^') {
            negated = true;
            ++pos_;
        }
        std::vector<std::pair<char32_t, char32_t>> ranges;
        while (peek() != ']') {
            if (at_end() || peek() == '\n' || peek() == '\r') error_at(open_at, "unclosed '['");
            const std::size_t item_at = pos_;
            const char32_t lo = parse_char();
            char32_t hi = lo;
            if (peek() == '-' && peek(1) != ']') {
                ++pos_;
                if (at_end()) error_at(open_at, "unclosed '['");
                hi = parse_char();
                if (hi < lo) error_at(item_at, "character range with its end before its start");
            }
            ranges.emplace_back(lo, hi);
            if (ranges.size() > 100000) error_at(open_at, "character class with too many items");
        }
        ++pos_;  // ']'
        if (ranges.empty()) error_at(open_at, "empty character class");
        std::sort(ranges.begin(), ranges.end());
        std::vector<std::pair<char32_t, char32_t>> merged;
        for (const auto& r : ranges) {
            if (!merged.empty() && r.first <= merged.back().second + 1) {
                merged.back().second = std::max(merged.back().second, r.second);
            } else {
                merged.push_back(r);
            }
        }
        if (negated) {
            std::vector<std::pair<char32_t, char32_t>> complement;
            char32_t next = 0;
            for (const auto& r : merged) {
                if (r.first > next) complement.emplace_back(next, r.first - 1);
                next = r.second + 1;
            }
            if (next <= 0x10FFFF) complement.emplace_back(next, 0x10FFFF);
            if (complement.empty()) error_at(open_at, "negated class that matches nothing");
            merged = std::move(complement);
        }
        if (merged.size() == 1 && merged[0].first == merged[0].second) return {Op::chr, merged[0].first};
        return {Op::cls, intern_class(std::move(merged))};
    }

    std::uint32_t any_class() { return intern_class({{0, 0x10FFFF}}); }

    std::uint32_t intern_class(std::vector<std::pair<char32_t, char32_t>> ranges) {
        std::string key;
        for (const auto& [lo, hi] : ranges) {
            key.append(reinterpret_cast<const char*>(&lo), sizeof lo);
            key.append(reinterpret_cast<const char*>(&hi), sizeof hi);
        }
        auto [it, inserted] = class_ids_.try_emplace(std::move(key), 0u);
        if (!inserted) return it->second;
        CharClass c;
        for (const auto& [lo, hi] : ranges) {
            for (char32_t cp = lo; cp <= hi && cp < 128; ++cp) c.ascii[cp >> 6] |= 1ull << (cp & 63);
        }
        c.ranges = std::move(ranges);
        classes_.push_back(std::move(c));
        it->second = static_cast<std::uint32_t>(classes_.size() - 1);
        return it->second;
    }

    // ---- completion --------------------------------------------------------------------------

    Grammar finish() {
        for (const Symbol& s : symbols_) {
            if (!s.defined) error_at(s.first_use, "undefined rule '" + s.name + "'");
        }
        const auto root = ids_.find("root");
        if (root == ids_.end()) fail("grammar: no 'root' rule (the start of the output)");

        Grammar g;
        g.elements.reserve(n_elements_);
        g.rule_start.reserve(rules_.size());
        for (std::size_t r = 0; r < rules_.size(); ++r) {
            g.rule_start.push_back(static_cast<std::uint32_t>(g.elements.size()));
            g.elements.insert(g.elements.end(), rules_[r].begin(), rules_[r].end());
            g.rule_names.push_back(std::move(symbols_[r].name));
        }
        g.classes = std::move(classes_);
        g.root = root->second;
        for (std::size_t r = 0; r < g.rule_start.size(); ++r) {
            g.alt_offset.push_back(static_cast<std::uint32_t>(g.alt_starts.size()));
            std::size_t i = g.rule_start[r];
            g.alt_starts.push_back(static_cast<std::uint32_t>(i));
            for (; g.elements[i].op != Op::end; ++i) {
                if (g.elements[i].op == Op::alt) g.alt_starts.push_back(static_cast<std::uint32_t>(i + 1));
            }
        }
        g.alt_offset.push_back(static_cast<std::uint32_t>(g.alt_starts.size()));
        check_left_recursion(g);
        g.fingerprint = fingerprint(g);
        return g;
    }

    std::string_view text_;
    const Limits& limits_;
    std::size_t pos_ = 0;
    std::uint64_t n_elements_ = 0;
    std::vector<Rule> rules_;
    std::vector<Symbol> symbols_;
    std::unordered_map<std::string, std::uint32_t> ids_;
    std::vector<CharClass> classes_;
    std::unordered_map<std::string, std::uint32_t> class_ids_;
};

}  // namespace

bool CharClass::intersects(char32_t lo, char32_t hi) const noexcept {
    for (const auto& [a, b] : ranges) {
        if (a > hi) return false;
        if (b >= lo) return true;
    }
    return false;
}

Grammar parse_gbnf(std::string_view text, const Limits& limits) { return Parser(text, limits).run(); }

}  // namespace ember::grammar

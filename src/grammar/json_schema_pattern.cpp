// ECMA-262 regex (the subset JSON Schema patterns use) -> GBNF for the JSON-encoded content of
// the matching strings. Sets of code points are built first; each set is then written as the
// characters JSON may carry raw plus the escapes JSON requires (\" \\ and control characters).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "grammar/json_schema_parts.hpp"
#include "runtime/fail.hpp"
#include "runtime/utf8.hpp"

namespace ember::grammar {
namespace {

using Ranges = std::vector<std::pair<char32_t, char32_t>>;

Ranges normalized(Ranges r) {
    std::sort(r.begin(), r.end());
    Ranges out;
    for (const auto& x : r) {
        if (!out.empty() && x.first <= out.back().second + 1) out.back().second = std::max(out.back().second, x.second);
        else out.push_back(x);
    }
    return out;
}

Ranges complement(const Ranges& r) {
    Ranges out;
    char32_t next = 0;
    for (const auto& [lo, hi] : normalized(r)) {
        if (lo > next) out.emplace_back(next, lo - 1);
        next = hi + 1;
    }
    if (next <= 0x10FFFF) out.emplace_back(next, 0x10FFFF);
    return out;
}

Ranges minus(const Ranges& a, const Ranges& b) {
    Ranges both = complement(a);
    both.insert(both.end(), b.begin(), b.end());
    return complement(both);
}

bool contains(const Ranges& r, char32_t c) {
    for (const auto& [lo, hi] : r) {
        if (lo <= c && c <= hi) return true;
    }
    return false;
}

const Ranges kDigit{{'0', '9'}};
const Ranges kWord{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const Ranges kSpace{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
                    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
const Ranges kDot = complement({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}});
const Ranges kAny{{0, 0x10FFFF}};

void append_class_char(std::string& out, char32_t c) {
    if (c == '\\' || c == ']' || c == '[' || c == '-' || c == '^' || c == '"') {
        out += '\\';
        out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F || (c >= 0xD800 && c <= 0xDFFF) || (c >= 0x80 && c < 0xA0)) {
        static const char* hex = "0123456789ABCDEF";
        out += "\\u";
        for (int s = 12; s >= 0; s -= 4) out += hex[(c >> s) & 15];
    } else {
        append_utf8(out, c);
    }
}

// The JSON text of one character inside a string.
std::string json_char_text(char32_t c) {
    switch (c) {
        case '"': return "\\\"";
        case '\\': return "\\\\";
        case '\n': return "\\n";
        case '\r': return "\\r";
        case '\t': return "\\t";
        case '\b': return "\\b";
        case '\f': return "\\f";
        default: break;
    }
    std::string out;
    if (c < 0x20) {
        static const char* hex = "0123456789abcdef";
        out = "\\u00";
        out += hex[c >> 4];
        out += hex[c & 15];
    } else {
        append_utf8(out, c);
    }
    return out;
}

// GBNF for one JSON-encoded character from `set`.
std::string json_chars(const Ranges& set) {
    const Ranges specials{{0, 0x1F}, {'"', '"'}, {'\\', '\\'}};
    const Ranges plain = minus(set, specials);
    std::vector<std::string> alts;
    if (!plain.empty()) {
        std::string cls = "[";
        for (const auto& [lo, hi] : plain) {
            append_class_char(cls, lo);
            if (hi != lo) {
                cls += '-';
                append_class_char(cls, hi);
            }
        }
        alts.push_back(cls + "]");
    }
    for (char32_t c = 0; c < 0x20; ++c) {
        if (contains(set, c)) alts.push_back(gbnf_literal(json_char_text(c)));
    }
    if (contains(set, '"')) alts.push_back(gbnf_literal("\\\""));
    if (contains(set, '\\')) alts.push_back(gbnf_literal("\\\\"));
    if (alts.empty()) fail("JSON Schema: pattern has a character class that matches nothing");
    if (alts.size() == 1) return alts[0];
    std::string out = "(";
    for (std::size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out + ")";
}

class RegexParser {
public:
    explicit RegexParser(std::string_view pattern) : text_(pattern) {
        std::size_t i = 0;
        while (i < pattern.size()) {  // the pattern came from a parsed JSON string: valid UTF-8
            const auto lead = static_cast<unsigned char>(pattern[i]);
            const std::size_t n = utf8_sequence_length(lead);
            char32_t c = n == 1 ? lead : lead & (0x7F >> n);
            for (std::size_t k = 1; k < n && i + k < pattern.size(); ++k) {
                c = (c << 6) | (static_cast<unsigned char>(pattern[i + k]) & 0x3F);
            }
            cps_.push_back(c);
            i += n;
        }
    }

    std::string run() {
        std::vector<std::string> alts;
        while (true) {
            const bool anchored_start = peek() == '^';
            if (anchored_start) ++i_;
            std::string seq = sequence(0);
            bool anchored_end = false;
            if (peek() == '$') {
                ++i_;
                anchored_end = true;
                if (!at_end() && peek() != '|') error("'$' is supported only at the end of the pattern");
            }
            const std::string any = json_chars(kAny) + "*";
            std::string alt;
            if (!anchored_start) alt += any + " ";
            alt += seq.empty() ? "\"\"" : seq;
            if (!anchored_end) alt += " " + any;
            alts.push_back(alt);
            if (at_end()) break;
            if (peek() == '|') {
                ++i_;
                continue;
            }
            error("unbalanced ')'");
        }
        if (alts.size() == 1) return alts[0];
        std::string out = "(";
        for (std::size_t k = 0; k < alts.size(); ++k) out += (k ? " | " : "") + alts[k];
        return out + ")";
    }

private:
    bool at_end() const { return i_ >= cps_.size(); }
    char32_t peek(std::size_t k = 0) const { return i_ + k < cps_.size() ? cps_[i_ + k] : 0; }
    [[noreturn]] void error(const std::string& what) const {
        fail("JSON Schema: pattern \"" + std::string(text_) + "\": " + what + " (at character " +
             std::to_string(i_) + ")");
    }

    // Alternatives inside a group.
    std::string alternation(int depth) {
        std::vector<std::string> alts{sequence(depth)};
        while (peek() == '|') {
            ++i_;
            alts.push_back(sequence(depth));
        }
        std::string out = "(";
        for (std::size_t k = 0; k < alts.size(); ++k) out += (k ? " | " : "") + (alts[k].empty() ? "\"\"" : alts[k]);
        return out + ")";
    }

    std::string sequence(int depth) {
        std::string out;
        while (!at_end() && peek() != '|' && peek() != ')') {
            if (peek() == '$') {
                if (depth == 0) break;  // the end anchor (checked by run)
                error("'$' inside a group is not supported");
            }
            if (peek() == '^') error("'^' is supported only at the start of the pattern");
            std::string item = atom(depth);
            item = quantified(std::move(item));
            if (!out.empty()) out += ' ';
            out += item;
        }
        return out;
    }

    std::string atom(int depth) {
        const char32_t c = peek();
        if (c == '(') {
            if (depth >= 64) error("groups nested deeper than 64");
            ++i_;
            if (peek() == '?') {
                if (peek(1) != ':') error("lookaround and named groups are not supported");
                i_ += 2;
            }
            std::string inner = alternation(depth + 1);
            if (peek() != ')') error("unclosed '('");
            ++i_;
            return inner;
        }
        if (c == '[') return json_chars(char_class());
        if (c == '.') {
            ++i_;
            return json_chars(kDot);
        }
        if (c == '*' || c == '+' || c == '?') error("quantifier without a preceding item");
        if (c == '{' && quantifier_ahead()) error("quantifier without a preceding item");
        if (c == '\\') {
            ++i_;
            Ranges set = escape(false);
            return json_chars(set);
        }
        ++i_;
        return gbnf_literal(json_char_text(c));
    }

    bool quantifier_ahead() const {
        std::size_t k = i_ + 1;
        auto digit = [&](std::size_t at) { return at < cps_.size() && cps_[at] >= '0' && cps_[at] <= '9'; };
        if (!digit(k)) return false;
        while (digit(k)) ++k;
        if (k < cps_.size() && cps_[k] == ',') {
            ++k;
            while (digit(k)) ++k;
        }
        return k < cps_.size() && cps_[k] == '}';
    }

    std::uint32_t number() {
        std::uint64_t v = 0;
        while (peek() >= '0' && peek() <= '9') {
            v = v * 10 + (peek() - '0');
            if (v > 100000) error("repetition count above 100000");
            ++i_;
        }
        return static_cast<std::uint32_t>(v);
    }

    std::string quantified(std::string item) {
        const char32_t c = peek();
        std::string q;
        if (c == '*' || c == '+' || c == '?') {
            ++i_;
            q = std::string(1, static_cast<char>(c));
        } else if (c == '{' && quantifier_ahead()) {
            ++i_;
            const std::uint32_t lo = number();
            std::string hi = std::to_string(lo);
            if (peek() == ',') {
                ++i_;
                hi = (peek() >= '0' && peek() <= '9') ? std::to_string(number()) : "";
                if (!hi.empty() && std::stoul(hi) < lo) error("repetition {m,n} with n < m");
            }
            ++i_;  // '}'
            q = "{" + std::to_string(lo) + (hi == std::to_string(lo) ? "" : "," + hi) + "}";
        } else {
            return item;
        }
        if (peek() == '?') ++i_;  // lazy: the same language
        if (peek() == '*' || peek() == '+' || peek() == '?' || (peek() == '{' && quantifier_ahead())) {
            error("nested quantifier");
        }
        if (item.find(' ') != std::string::npos && item.front() != '(') item = "(" + item + ")";
        return item + q;
    }

    // After a backslash.
    Ranges escape(bool in_class) {
        if (at_end()) error("pattern ends with a backslash");
        const char32_t c = peek();
        ++i_;
        switch (c) {
            case 'd': return kDigit;
            case 'D': return complement(kDigit);
            case 'w': return kWord;
            case 'W': return complement(kWord);
            case 's': return kSpace;
            case 'S': return complement(kSpace);
            case 't': return {{'\t', '\t'}};
            case 'n': return {{'\n', '\n'}};
            case 'r': return {{'\r', '\r'}};
            case 'f': return {{'\f', '\f'}};
            case 'v': return {{'\v', '\v'}};
            case '0': return {{0, 0}};
            case 'x': {
                const char32_t v = hex(2);
                return {{v, v}};
            }
            case 'u': {
                const char32_t v = hex(4);
                return {{v, v}};
            }
            case 'b':
                if (in_class) return {{'\b', '\b'}};
                error("word boundaries (\\b) are not supported");
            default: break;
        }
        if (c >= '1' && c <= '9') error("backreferences are not supported");
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
            error(std::string("unsupported escape \\") + static_cast<char>(c));
        }
        return {{c, c}};  // escaped punctuation stands for itself
    }

    char32_t hex(int n) {
        char32_t v = 0;
        for (int k = 0; k < n; ++k) {
            const char32_t c = peek();
            int d;
            if (c >= '0' && c <= '9') d = static_cast<int>(c - '0');
            else if (c >= 'a' && c <= 'f') d = static_cast<int>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') d = static_cast<int>(c - 'A' + 10);
            else error("expected " + std::to_string(n) + " hex digits");
            v = (v << 4) | static_cast<char32_t>(d);
            ++i_;
        }
        return v;
    }

    Ranges char_class() {
        ++i_;  // '['
        bool negated = false;
        if (peek() == '^') {
            negated = true;
            ++i_;
        }
        Ranges set;
        bool first = true;
        while (first || peek() != ']') {
            if (at_end()) error("unclosed '['");
            first = false;
            Ranges item = class_atom();
            // A range a-b between two single characters.
            if (peek() == '-' && peek(1) != ']' && peek(1) != 0 && item.size() == 1 && item[0].first == item[0].second) {
                ++i_;
                Ranges end = class_atom();
                if (end.size() != 1 || end[0].first != end[0].second) error("range with a class as its end");
                if (end[0].first < item[0].first) error("range out of order");
                item = {{item[0].first, end[0].first}};
            }
            set.insert(set.end(), item.begin(), item.end());
        }
        ++i_;  // ']'
        set = normalized(set);
        return negated ? complement(set) : set;
    }

    Ranges class_atom() {
        const char32_t c = peek();
        ++i_;
        if (c == '\\') return escape(true);
        if (c == '[' && peek() == ':') error("POSIX classes are not supported");
        return {{c, c}};
    }

    std::string_view text_;
    std::vector<char32_t> cps_;
    std::size_t i_ = 0;
};

}  // namespace

std::string gbnf_literal(std::string_view text) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7F) {
                    static const char* hex = "0123456789ABCDEF";
                    out += "\\x";
                    out += hex[c >> 4];
                    out += hex[c & 15];
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

std::string pattern_content(std::string_view pattern) { return RegexParser(pattern).run(); }

}  // namespace ember::grammar

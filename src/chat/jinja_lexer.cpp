#include "chat/jinja_lexer.hpp"

#include <algorithm>
#include <cstdint>

#include "runtime/fail.hpp"
#include "runtime/utf8.hpp"

namespace ember::jinja {

void fail_at(int line, int column, const std::string& message) {
    fail("chat template: line " + std::to_string(line) + ", column " + std::to_string(column) +
         ": " + message);
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }


class Lexer {
public:
    Lexer(std::string_view source, const LexerOptions& options) : opt_(options) {
        // jinja2 normalizes \r\n and \r to \n and drops one trailing newline.
        src_.reserve(source.size());
        for (std::size_t i = 0; i < source.size(); ++i) {
            if (source[i] == '\r') {
                src_ += '\n';
                if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
            } else {
                src_ += source[i];
            }
        }
        if (!opt_.keep_trailing_newline && !src_.empty() && src_.back() == '\n') src_.pop_back();
        line_starts_.push_back(0);
        for (std::size_t i = 0; i < src_.size(); ++i)
            if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }

    std::vector<Token> run() {
        std::size_t pos = 0;
        bool line_starting = true;
        while (pos < src_.size()) {
            std::size_t start = find_tag(pos);
            std::string text = src_.substr(pos, start == std::string::npos ? std::string::npos : start - pos);
            if (start == std::string::npos) {
                emit_text(std::move(text), pos);
                break;
            }
            char kind = src_[start + 1];
            char sign = start + 2 < src_.size() ? src_[start + 2] : '\0';
            if (sign == '-') {
                while (!text.empty() && is_space(text.back())) text.pop_back();
            } else if (sign != '+' && opt_.lstrip_blocks && kind != '{') {
                std::size_t nl = text.rfind('\n');
                std::size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
                if ((l_pos > 0 || line_starting) && l_pos < text.size() &&
                    std::all_of(text.begin() + static_cast<std::ptrdiff_t>(l_pos), text.end(), is_space))
                    text.resize(l_pos);
            }
            emit_text(std::move(text), pos);
            std::size_t p = start + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
            if (kind == '#') {
                pos = lex_comment(start, p, line_starting);
            } else {
                pos = lex_tag(kind == '{', start, p, line_starting);
            }
        }
        Token eof{Token::Type::eof, "", 0, 0};
        locate(src_.size(), eof);
        tokens_.push_back(eof);
        return std::move(tokens_);
    }

private:
    LexerOptions opt_;
    std::string src_;
    std::vector<std::size_t> line_starts_;
    std::vector<Token> tokens_;

    // Line and column (in characters) of a byte offset. Tokens arrive in increasing order, so
    // the scan continues from the previous position; earlier offsets rescan their line.
    mutable std::size_t cursor_offset_ = 0;
    mutable int cursor_line_ = 1;
    mutable int cursor_column_ = 1;

    void locate(std::size_t offset, Token& t) const {
        if (offset < cursor_offset_) {
            auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
            std::size_t line_index = static_cast<std::size_t>(it - line_starts_.begin()) - 1;
            cursor_offset_ = line_starts_[line_index];
            cursor_line_ = static_cast<int>(line_index + 1);
            cursor_column_ = 1;
        }
        for (; cursor_offset_ < offset && cursor_offset_ < src_.size(); ++cursor_offset_) {
            char c = src_[cursor_offset_];
            if (c == '\n') {
                ++cursor_line_;
                cursor_column_ = 1;
            } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
                ++cursor_column_;
            }
        }
        t.line = cursor_line_;
        t.column = cursor_column_;
    }

    [[noreturn]] void error(std::size_t offset, const std::string& message) const {
        Token t;
        locate(offset, t);
        fail_at(t.line, t.column, message);
    }

    void push(Token::Type type, std::string value, std::size_t offset) {
        Token t{type, std::move(value), 0, 0};
        locate(offset, t);
        tokens_.push_back(std::move(t));
    }

    void emit_text(std::string text, std::size_t offset) {
        if (!text.empty()) push(Token::Type::text, std::move(text), offset);
    }

    std::size_t find_tag(std::size_t pos) const {
        for (std::size_t i = src_.find('{', pos); i != std::string::npos; i = src_.find('{', i + 1)) {
            if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
                return i;
        }
        return std::string::npos;
    }

    // Whitespace after an end tag: '-' strips all, trim_blocks drops one newline after %} and #}.
    std::size_t after_end(std::size_t end, char sign, bool is_block_or_comment, bool& line_starting) const {
        std::size_t pos = end;
        if (sign == '-') {
            while (pos < src_.size() && is_space(src_[pos])) ++pos;
        } else if (sign != '+' && is_block_or_comment && opt_.trim_blocks && pos < src_.size() &&
                   src_[pos] == '\n') {
            ++pos;
        }
        line_starting = pos > end && src_[pos - 1] == '\n';
        return pos;
    }

    std::size_t lex_comment(std::size_t start, std::size_t p, bool& line_starting) {
        std::size_t j = src_.find("#}", p);
        if (j == std::string::npos) error(start, "missing end of comment tag");
        char sign = (j > p && (src_[j - 1] == '-' || src_[j - 1] == '+')) ? src_[j - 1] : '\0';
        return after_end(j + 2, sign, true, line_starting);
    }

    std::size_t lex_tag(bool is_var, std::size_t start, std::size_t p, bool& line_starting) {
        push(is_var ? Token::Type::var_begin : Token::Type::block_begin, "", start);
        int depth = 0;
        std::size_t pos = p;
        for (;;) {
            while (pos < src_.size() && is_space(src_[pos])) ++pos;
            if (pos >= src_.size()) error(start, is_var ? "unexpected end of template, expected '}}'"
                                                        : "unexpected end of template, expected '%}'");
            std::string_view rest(src_.data() + pos, src_.size() - pos);
            if (depth == 0) {
                const char* close = is_var ? "}}" : "%}";
                char sign = '\0';
                std::size_t len = 0;
                if ((rest[0] == '-' || (!is_var && rest[0] == '+')) && rest.substr(1, 2) == close) {
                    sign = rest[0];
                    len = 3;
                } else if (rest.substr(0, 2) == close) {
                    len = 2;
                }
                if (len) {
                    push(is_var ? Token::Type::var_end : Token::Type::block_end, "", pos);
                    return after_end(pos + len, sign, !is_var, line_starting);
                }
            }
            pos = lex_token(pos, depth);
        }
    }

    std::size_t lex_token(std::size_t pos, int& depth) {
        char c = src_[pos];
        if (is_name_start(c)) {
            std::size_t e = pos;
            while (e < src_.size() && is_name_char(src_[e])) ++e;
            push(Token::Type::name, src_.substr(pos, e - pos), pos);
            return e;
        }
        if (is_digit(c)) return lex_number(pos);
        if (c == '\'' || c == '"') return lex_string(pos);
        static const char* const kOps[] = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/",
                                           "%",  "~",  "<",  ">",  "=",  ".",  ",", ":", "|", "(",
                                           ")",  "[",  "]",  "{",  "}",  ";"};
        for (const char* op : kOps) {
            std::string_view o(op);
            if (src_.compare(pos, o.size(), o) == 0) {
                if (o == "(" || o == "[" || o == "{") ++depth;
                if (o == ")" || o == "]" || o == "}") {
                    if (depth == 0) error(pos, "unexpected '" + std::string(o) + "'");
                    --depth;
                }
                push(Token::Type::op, std::string(o), pos);
                return pos + o.size();
            }
        }
        error(pos, std::string("unexpected character '") + c + "'");
    }

    std::size_t lex_number(std::size_t pos) {
        auto digits = [&](std::size_t i) {
            while (i < src_.size() && (is_digit(src_[i]) || (src_[i] == '_' && i + 1 < src_.size() && is_digit(src_[i + 1]))))
                ++i;
            return i;
        };
        std::size_t e = digits(pos);
        bool after_dot = !tokens_.empty() && tokens_.back().type == Token::Type::op && tokens_.back().value == ".";
        bool is_float = false;
        if (!after_dot) {
            if (e + 1 < src_.size() && src_[e] == '.' && is_digit(src_[e + 1])) {
                e = digits(e + 1);
                is_float = true;
            }
            if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
                std::size_t x = e + 1;
                if (x < src_.size() && (src_[x] == '+' || src_[x] == '-')) ++x;
                if (x < src_.size() && is_digit(src_[x])) {
                    e = digits(x);
                    is_float = true;
                }
            }
        }
        std::string text;
        for (std::size_t i = pos; i < e; ++i)
            if (src_[i] != '_') text += src_[i];
        push(is_float ? Token::Type::floating : Token::Type::integer, std::move(text), pos);
        return e;
    }

    std::size_t lex_string(std::size_t pos) {
        char quote = src_[pos];
        std::string out;
        std::size_t i = pos + 1;
        auto hex = [&](std::size_t at, int n) -> std::uint32_t {
            if (at + static_cast<std::size_t>(n) > src_.size()) error(at, "truncated escape in string");
            std::uint32_t v = 0;
            for (int k = 0; k < n; ++k) {
                char h = src_[at + static_cast<std::size_t>(k)];
                v <<= 4;
                if (is_digit(h)) v |= static_cast<std::uint32_t>(h - '0');
                else if (h >= 'a' && h <= 'f') v |= static_cast<std::uint32_t>(h - 'a' + 10);
                else if (h >= 'A' && h <= 'F') v |= static_cast<std::uint32_t>(h - 'A' + 10);
                else error(at, "bad hex digit in string escape");
            }
            return v;
        };
        for (;;) {
            if (i >= src_.size()) error(pos, "unterminated string");
            char c = src_[i];
            if (c == quote) break;
            if (c != '\\') {
                out += c;
                ++i;
                continue;
            }
            if (i + 1 >= src_.size()) error(pos, "unterminated string");
            char e = src_[i + 1];
            i += 2;
            switch (e) {
                case '\\': out += '\\'; break;
                case '\'': out += '\''; break;
                case '"': out += '"'; break;
                case 'n': out += '\n'; break;
                case 't': out += '\t'; break;
                case 'r': out += '\r'; break;
                case 'a': out += '\a'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'v': out += '\v'; break;
                case '0': out += '\0'; break;
                case '\n': break;  // line continuation
                case 'x': append_utf8(out, hex(i, 2)); i += 2; break;
                case 'u': append_utf8(out, hex(i, 4)); i += 4; break;
                case 'U': append_utf8(out, hex(i, 8)); i += 8; break;
                default: out += '\\'; out += e; break;
            }
        }
        push(Token::Type::string, std::move(out), pos);
        return i + 1;
    }
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const LexerOptions& options) {
    return Lexer(source, options).run();
}

}  // namespace ember::jinja

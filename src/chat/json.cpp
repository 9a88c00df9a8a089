#include "chat/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/fail.hpp"
#include "runtime/utf8.hpp"

namespace ember::json {

const char* type_name(Value::Type type) noexcept {
    switch (type) {
        case Value::Type::null: return "null";
        case Value::Type::boolean: return "boolean";
        case Value::Type::integer: return "integer";
        case Value::Type::number: return "number";
        case Value::Type::string: return "string";
        case Value::Type::array: return "array";
        case Value::Type::object: return "object";
    }
    return "unknown";
}

namespace {
[[noreturn]] void type_mismatch(const char* want, Value::Type got) {
    fail(std::string("JSON: expected ") + want + ", got " + type_name(got));
}
}  // namespace

bool Value::as_bool() const {
    if (!is_bool()) type_mismatch("boolean", type());
    return std::get<bool>(v_);
}
std::int64_t Value::as_int() const {
    if (!is_int()) type_mismatch("integer", type());
    return std::get<std::int64_t>(v_);
}
double Value::as_double() const {
    if (is_int()) return static_cast<double>(std::get<std::int64_t>(v_));
    if (!is_number()) type_mismatch("number", type());
    return std::get<double>(v_);
}
const std::string& Value::as_string() const {
    if (!is_string()) type_mismatch("string", type());
    return std::get<std::string>(v_);
}
const Value::Array& Value::as_array() const {
    if (!is_array()) type_mismatch("array", type());
    return std::get<Array>(v_);
}
Value::Array& Value::as_array() {
    if (!is_array()) type_mismatch("array", type());
    return std::get<Array>(v_);
}
const Value::Object& Value::as_object() const {
    if (!is_object()) type_mismatch("object", type());
    return std::get<Object>(v_);
}
Value::Object& Value::as_object() {
    if (!is_object()) type_mismatch("object", type());
    return std::get<Object>(v_);
}

const Value* Value::find(std::string_view key) const {
    if (!is_object()) return nullptr;
    for (const auto& [k, v] : std::get<Object>(v_))
        if (k == key) return &v;
    return nullptr;
}

void Value::set(std::string key, Value value) {
    if (is_null()) v_ = Object{};
    auto& obj = as_object();
    for (auto& [k, v] : obj) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    obj.emplace_back(std::move(key), std::move(value));
}

void Value::push_back(Value value) {
    if (is_null()) v_ = Array{};
    as_array().push_back(std::move(value));
}

bool operator==(const Value& a, const Value& b) { return a.v_ == b.v_; }

// ---- parser -------------------------------------------------------------------------------

namespace {

constexpr int kMaxDepth = 512;

class Parser {
public:
    explicit Parser(std::string_view text) : s_(text) {}

    Value parse_document() {
        skip_ws();
        Value v = parse_value(0);
        skip_ws();
        if (pos_ != s_.size()) error("unexpected text after the JSON value");
        return v;
    }

private:
    std::string_view s_;
    std::size_t pos_ = 0;

    [[noreturn]] void error(const std::string& what) const {
        int line = 1, col = 1;
        for (std::size_t i = 0; i < pos_ && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        fail("JSON: line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
    }

    void skip_ws() {
        while (pos_ < s_.size() &&
               (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }

    bool eat_word(std::string_view w) {
        if (s_.substr(pos_, w.size()) == w) {
            pos_ += w.size();
            return true;
        }
        return false;
    }

    Value parse_value(int depth) {
        if (depth > kMaxDepth) error("nesting deeper than 512 levels");
        if (pos_ >= s_.size()) error("unexpected end of input");
        char c = s_[pos_];
        if (c == '{') return parse_object(depth);
        if (c == '[') return parse_array(depth);
        if (c == '"') return Value(parse_string());
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
        if (eat_word("true")) return Value(true);
        if (eat_word("false")) return Value(false);
        if (eat_word("null")) return Value();
        error(std::string("unexpected character '") + c + "'");
    }

    Value parse_object(int depth) {
        ++pos_;  // '{'
        Value::Object obj;
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            return Value(std::move(obj));
        }
        for (;;) {
            skip_ws();
            if (pos_ >= s_.size() || s_[pos_] != '"') error("expected a string key");
            std::string key = parse_string();
            skip_ws();
            if (pos_ >= s_.size() || s_[pos_] != ':') error("expected ':'");
            ++pos_;
            skip_ws();
            Value v = parse_value(depth + 1);
            bool replaced = false;  // Python keeps the last duplicate, in the first one's place.
            for (auto& [k, old] : obj) {
                if (k == key) {
                    old = std::move(v);
                    replaced = true;
                    break;
                }
            }
            if (!replaced) obj.emplace_back(std::move(key), std::move(v));
            skip_ws();
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (pos_ < s_.size() && s_[pos_] == '}') {
                ++pos_;
                return Value(std::move(obj));
            }
            error("expected ',' or '}'");
        }
    }

    Value parse_array(int depth) {
        ++pos_;  // '['
        Value::Array arr;
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            return Value(std::move(arr));
        }
        for (;;) {
            skip_ws();
            arr.push_back(parse_value(depth + 1));
            skip_ws();
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (pos_ < s_.size() && s_[pos_] == ']') {
                ++pos_;
                return Value(std::move(arr));
            }
            error("expected ',' or ']'");
        }
    }


    std::uint32_t parse_hex4() {
        if (pos_ + 4 > s_.size()) error("truncated \\u escape");
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            char c = s_[pos_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
            else error("bad hex digit in \\u escape");
        }
        return v;
    }

    std::string parse_string() {
        ++pos_;  // opening quote
        std::string out;
        for (;;) {
            if (pos_ >= s_.size()) error("unterminated string");
            unsigned char c = static_cast<unsigned char>(s_[pos_]);
            if (c == '"') {
                ++pos_;
                return out;
            }
            if (c < 0x20) error("control character in string");
            if (c != '\\') {
                out += static_cast<char>(c);
                ++pos_;
                continue;
            }
            ++pos_;
            if (pos_ >= s_.size()) error("unterminated escape");
            char e = s_[pos_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    std::uint32_t cp = parse_hex4();
                    if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(pos_, 2) == "\\u") {
                        std::size_t save = pos_;
                        pos_ += 2;
                        std::uint32_t lo = parse_hex4();
                        if (lo >= 0xDC00 && lo < 0xE000) {
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        } else {
                            pos_ = save;
                        }
                    }
                    append_utf8(out, cp);
                    break;
                }
                default: error(std::string("bad escape '\\") + e + "'");
            }
        }
    }

    Value parse_number() {
        std::size_t start = pos_;
        bool is_float = false;
        if (s_[pos_] == '-') ++pos_;
        if (pos_ >= s_.size() || !(s_[pos_] >= '0' && s_[pos_] <= '9')) error("bad number");
        if (s_[pos_] == '0') {
            ++pos_;
        } else {
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
        }
        if (pos_ < s_.size() && s_[pos_] == '.') {
            is_float = true;
            ++pos_;
            if (pos_ >= s_.size() || !(s_[pos_] >= '0' && s_[pos_] <= '9')) error("bad number");
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            is_float = true;
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            if (pos_ >= s_.size() || !(s_[pos_] >= '0' && s_[pos_] <= '9')) error("bad number");
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
        }
        std::string_view text = s_.substr(start, pos_ - start);
        if (!is_float) {
            std::int64_t v = 0;
            auto r = std::from_chars(text.data(), text.data() + text.size(), v);
            if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return Value(v);
        }
        std::string copy(text);
        return Value(std::strtod(copy.c_str(), nullptr));
    }
};

}  // namespace

Value parse(std::string_view text) { return Parser(text).parse_document(); }

// ---- serializer ---------------------------------------------------------------------------

std::string python_float_repr(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
    std::string sci(buf, r.ptr);  // e.g. "-1.2345e+06": shortest round-trip digits
    bool negative = sci[0] == '-';
    if (negative) sci.erase(0, 1);
    std::size_t e = sci.find('e');
    std::string digits;
    for (std::size_t i = 0; i < e; ++i)
        if (sci[i] != '.') digits += sci[i];
    int exp10 = std::atoi(sci.c_str() + e + 1);
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    std::string out = negative ? "-" : "";
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 < 0) {
            out += "0.";
            out.append(static_cast<std::size_t>(-exp10 - 1), '0');
            out += digits;
        } else {
            auto int_len = static_cast<std::size_t>(exp10 + 1);
            if (digits.size() <= int_len) {
                out += digits;
                out.append(int_len - digits.size(), '0');
                out += ".0";
            } else {
                out += digits.substr(0, int_len);
                out += '.';
                out += digits.substr(int_len);
            }
        }
    } else {
        out += digits[0];
        if (digits.size() > 1) {
            out += '.';
            out += digits.substr(1);
        }
        char ebuf[16];
        std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        out += ebuf;
    }
    return out;
}

void append_quoted(std::string& out, std::string_view text) {
    out += '"';
    for (char ch : text) {
        auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                    out += buf;
                } else {
                    out += ch;
                }
        }
    }
    out += '"';
}

namespace {

void dump_to(std::string& out, const Value& v, int indent, int level) {
    auto newline = [&](int lvl) {
        out += '\n';
        out.append(static_cast<std::size_t>(indent * lvl), ' ');
    };
    const char* item_sep = indent >= 0 ? "," : ", ";
    switch (v.type()) {
        case Value::Type::null: out += "null"; break;
        case Value::Type::boolean: out += v.as_bool() ? "true" : "false"; break;
        case Value::Type::integer: out += std::to_string(v.as_int()); break;
        case Value::Type::number: {
            double d = v.as_double();
            if (std::isnan(d)) out += "NaN";
            else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
            else out += python_float_repr(d);
            break;
        }
        case Value::Type::string: append_quoted(out, v.as_string()); break;
        case Value::Type::array: {
            const auto& arr = v.as_array();
            if (arr.empty()) {
                out += "[]";
                break;
            }
            out += '[';
            for (std::size_t i = 0; i < arr.size(); ++i) {
                if (i) out += item_sep;
                if (indent >= 0) newline(level + 1);
                dump_to(out, arr[i], indent, level + 1);
            }
            if (indent >= 0) newline(level);
            out += ']';
            break;
        }
        case Value::Type::object: {
            const auto& obj = v.as_object();
            if (obj.empty()) {
                out += "{}";
                break;
            }
            out += '{';
            for (std::size_t i = 0; i < obj.size(); ++i) {
                if (i) out += item_sep;
                if (indent >= 0) newline(level + 1);
                append_quoted(out, obj[i].first);
                out += ": ";
                dump_to(out, obj[i].second, indent, level + 1);
            }
            if (indent >= 0) newline(level);
            out += '}';
            break;
        }
    }
}

}  // namespace

std::string dump(const Value& value, int indent) {
    std::string out;
    dump_to(out, value, indent, 0);
    return out;
}

}  // namespace ember::json

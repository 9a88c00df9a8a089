#include "chat/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/fail.hpp"

namespace ember::json {

namespace {

// Calls step(i, +1) at each [ or { and step(i, -1) at each ] or } of `text` from `start`,
// skipping strings, until step returns false.
template <class Step>
void scan_brackets(std::string_view text, std::size_t start, Step step) {
    bool in_string = false;
    for (std::size_t i = start; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if ((c == '[' || c == '{') && !step(i, 1)) {
            return;
        } else if ((c == ']' || c == '}') && !step(i, -1)) {
            return;
        }
    }
}

}  // namespace

int nesting_depth(std::string_view text) noexcept {
    int depth = 0, deepest = 0;
    scan_brackets(text, 0, [&](std::size_t, int d) {
        depth += d;
        deepest = std::max(deepest, depth);
        return true;
    });
    return deepest;
}

std::size_t bracket_end(std::string_view text, std::size_t start) noexcept {
    int depth = 0;
    std::size_t end = std::string_view::npos;
    scan_brackets(text, start, [&](std::size_t i, int d) {
        depth += d;
        if (depth > 0) return true;
        end = i + 1;
        return false;
    });
    return end;
}

Value parse(std::string_view text) {
    // Checked first: the values are walked recursively afterwards (conversions, dump).
    if (nesting_depth(text) > kMaxDepth) fail("JSON: nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    try {
        return Value::parse(text);
    } catch (const Value::parse_error& e) {
        // "[json.exception.parse_error.101] parse error at line 2, column 4: syntax error ..."
        std::string what = e.what();
        const std::size_t at = what.find("line ");
        fail("JSON: " + (at == std::string::npos ? what : what.substr(at)));
    } catch (const Value::exception& e) {
        // A number past double's range: "[json.exception.out_of_range.406] number overflow
        // parsing '1e400'" (Python reads it as inf; a JSON text holding it is refused here).
        std::string what = e.what();
        const std::size_t at = what.find("] ");
        fail("JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
    }
}

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
        case Value::value_t::null: out += "null"; break;
        case Value::value_t::boolean: out += v.get<bool>() ? "true" : "false"; break;
        case Value::value_t::number_integer: out += std::to_string(v.get<std::int64_t>()); break;
        case Value::value_t::number_unsigned: out += std::to_string(v.get<std::uint64_t>()); break;
        case Value::value_t::number_float: {
            const double d = v.get<double>();
            if (std::isnan(d)) out += "NaN";
            else if (std::isinf(d)) out += d < 0 ? "-Infinity" : "Infinity";
            else out += python_float_repr(d);
            break;
        }
        case Value::value_t::string: append_quoted(out, v.get_ref<const std::string&>()); break;
        case Value::value_t::array: {
            if (v.empty()) {
                out += "[]";
                break;
            }
            out += '[';
            bool first = true;
            for (const Value& e : v) {
                if (!first) out += item_sep;
                first = false;
                if (indent >= 0) newline(level + 1);
                dump_to(out, e, indent, level + 1);
            }
            if (indent >= 0) newline(level);
            out += ']';
            break;
        }
        case Value::value_t::object: {
            if (v.empty()) {
                out += "{}";
                break;
            }
            out += '{';
            bool first = true;
            for (const auto& item : v.items()) {
                if (!first) out += item_sep;
                first = false;
                if (indent >= 0) newline(level + 1);
                append_quoted(out, item.key());
                out += ": ";
                dump_to(out, item.value(), indent, level + 1);
            }
            if (indent >= 0) newline(level);
            out += '}';
            break;
        }
        case Value::value_t::binary:
        case Value::value_t::discarded: fail("JSON: value cannot be serialized");
    }
}

}  // namespace

std::string dump(const Value& value, int indent) {
    std::string out;
    dump_to(out, value, indent, 0);
    return out;
}

}  // namespace ember::json

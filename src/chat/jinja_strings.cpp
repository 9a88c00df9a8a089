#include "chat/jinja_strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "runtime/fail.hpp"

namespace ember::jinja {

bool py_is_space_char(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
           (c >= '\x1c' && c <= '\x1f');
}

namespace {

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
char to_upper(char c) { return is_lower(c) ? static_cast<char>(c - 32) : c; }
char to_lower(char c) { return is_upper(c) ? static_cast<char>(c + 32) : c; }

}  // namespace

std::string py_strip(std::string_view s, const std::optional<std::string>& chars, StripSide side) {
    std::vector<std::size_t> off = codepoint_offsets(s);
    std::size_t n = off.size() - 1;
    std::vector<std::string_view> set;
    if (chars) {
        std::vector<std::size_t> coff = codepoint_offsets(*chars);
        for (std::size_t i = 0; i + 1 < coff.size(); ++i)
            set.push_back(std::string_view(*chars).substr(coff[i], coff[i + 1] - coff[i]));
    }
    auto strip_at = [&](std::size_t i) {
        std::string_view cp = s.substr(off[i], off[i + 1] - off[i]);
        if (!chars) return cp.size() == 1 && py_is_space_char(cp[0]);
        for (auto c : set)
            if (c == cp) return true;
        return false;
    };
    std::size_t b = 0, e = n;
    if (side != StripSide::right)
        while (b < e && strip_at(b)) ++b;
    if (side != StripSide::left)
        while (e > b && strip_at(e - 1)) --e;
    return std::string(s.substr(off[b], off[e] - off[b]));
}

std::vector<std::string> py_split(std::string_view s, const std::optional<std::string>& sep, long long maxsplit) {
    std::vector<std::string> out;
    if (!sep) {
        std::size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && py_is_space_char(s[i])) ++i;
            if (i >= s.size()) break;
            if (maxsplit >= 0 && static_cast<long long>(out.size()) == maxsplit) {
                std::size_t e = s.size();
                while (e > i && py_is_space_char(s[e - 1])) --e;
                out.emplace_back(s.substr(i, e - i));
                sandbox_check_items(out.size());
                return out;
            }
            std::size_t j = i;
            while (j < s.size() && !py_is_space_char(s[j])) ++j;
            out.emplace_back(s.substr(i, j - i));
            sandbox_check_items(out.size());
            i = j;
        }
        return out;
    }
    if (sep->empty()) fail("empty separator");
    std::size_t start = 0;
    while (maxsplit < 0 || static_cast<long long>(out.size()) < maxsplit) {
        std::size_t p = s.find(*sep, start);
        if (p == std::string_view::npos) break;
        out.emplace_back(s.substr(start, p - start));
        sandbox_check_items(out.size());
        start = p + sep->size();
    }
    out.emplace_back(s.substr(start));
    return out;
}

std::vector<std::string> py_rsplit(std::string_view s, const std::optional<std::string>& sep, long long maxsplit) {
    if (maxsplit < 0) return py_split(s, sep, maxsplit);
    std::vector<std::string> rev;
    if (!sep) {
        std::size_t e = s.size();
        while (e > 0) {
            while (e > 0 && py_is_space_char(s[e - 1])) --e;
            if (e == 0) break;
            if (static_cast<long long>(rev.size()) == maxsplit) {
                std::size_t b = 0;
                while (b < e && py_is_space_char(s[b])) ++b;
                rev.emplace_back(s.substr(b, e - b));
                sandbox_check_items(rev.size());
                e = 0;
                break;
            }
            std::size_t b = e;
            while (b > 0 && !py_is_space_char(s[b - 1])) --b;
            rev.emplace_back(s.substr(b, e - b));
            sandbox_check_items(rev.size());
            e = b;
        }
    } else {
        if (sep->empty()) fail("empty separator");
        std::size_t end = s.size();
        while (static_cast<long long>(rev.size()) < maxsplit) {
            if (end < sep->size()) break;
            std::size_t p = s.rfind(*sep, end - sep->size());
            if (p == std::string_view::npos) break;
            rev.emplace_back(s.substr(p + sep->size(), end - p - sep->size()));
            sandbox_check_items(rev.size());
            end = p;
        }
        rev.emplace_back(s.substr(0, end));
    }
    return std::vector<std::string>(rev.rbegin(), rev.rend());
}

std::string py_replace(std::string_view s, std::string_view from, std::string_view to, long long count,
                       std::size_t max_bytes) {
    std::string out;
    long long done = 0;
    if (from.empty()) {
        // Python inserts `to` before every code point and at the end.
        std::vector<std::size_t> off = codepoint_offsets(s);
        for (std::size_t i = 0; i + 1 < off.size(); ++i) {
            if (count < 0 || done < count) {
                out += to;
                ++done;
            }
            out += s.substr(off[i], off[i + 1] - off[i]);
            if (out.size() > max_bytes) fail("string longer than the template output limit");
        }
        if (count < 0 || done < count) out += to;
        return out;
    }
    std::size_t start = 0;
    while (count < 0 || done < count) {
        std::size_t p = s.find(from, start);
        if (p == std::string_view::npos) break;
        out += s.substr(start, p - start);
        out += to;
        start = p + from.size();
        ++done;
        if (out.size() > max_bytes) fail("string longer than the template output limit");
    }
    out += s.substr(start);
    return out;
}

std::string py_upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = to_upper(c);
    return out;
}

std::string py_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = to_lower(c);
    return out;
}

std::string py_title(std::string_view s) {
    std::string out(s);
    bool prev_cased = false;
    for (char& c : out) {
        if (is_lower(c) || is_upper(c)) {
            c = prev_cased ? to_lower(c) : to_upper(c);
            prev_cased = true;
        } else {
            prev_cased = false;
        }
    }
    return out;
}

std::string py_capitalize(std::string_view s) {
    std::string out = py_lower(s);
    if (!out.empty()) out[0] = to_upper(out[0]);
    return out;
}

std::string jinja_title(std::string_view s) {
    auto is_sep = [](char c) { return c == '-' || py_is_space_char(c) || c == '(' || c == '{' || c == '[' || c == '<'; };
    std::string out(s);
    bool at_start = true;
    for (char& c : out) {
        if (is_sep(c)) {
            at_start = true;
            continue;
        }
        c = at_start ? to_upper(c) : to_lower(c);
        at_start = false;
    }
    return out;
}

std::vector<std::string> py_splitlines(std::string_view s) {
    std::vector<std::string> out;
    std::size_t start = 0, i = 0;
    while (i < s.size()) {
        char c = s[i];
        if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= '\x1c' && c <= '\x1e')) {
            out.emplace_back(s.substr(start, i - start));
            sandbox_check_items(out.size());
            if (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
            start = ++i;
        } else {
            ++i;
        }
    }
    if (start < s.size()) out.emplace_back(s.substr(start));
    return out;
}

std::string html_escape(std::string_view s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace {

// Applies a format spec "[[fill]align][sign][width][.precision][type]" to a value.
std::string apply_spec(const Value& v, std::string_view spec) {
    char fill = ' ', align = '\0';
    std::size_t i = 0;
    if (spec.size() >= 2 && (spec[1] == '<' || spec[1] == '>' || spec[1] == '^')) {
        fill = spec[0];
        align = spec[1];
        i = 2;
    } else if (!spec.empty() && (spec[0] == '<' || spec[0] == '>' || spec[0] == '^')) {
        align = spec[0];
        i = 1;
    }
    bool zero = false;
    if (i < spec.size() && spec[i] == '0') {
        zero = true;
        ++i;
    }
    std::size_t width = 0;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') {
        width = width * 10 + static_cast<std::size_t>(spec[i++] - '0');
        if (width > kMaxFormatWidth) fail("format width larger than " + std::to_string(kMaxFormatWidth));
    }
    int precision = -1;
    if (i < spec.size() && spec[i] == '.') {
        ++i;
        precision = 0;
        while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') {
            precision = precision * 10 + (spec[i++] - '0');
            if (precision > static_cast<int>(kMaxFormatWidth))
                fail("format precision larger than " + std::to_string(kMaxFormatWidth));
        }
    }
    char type = i < spec.size() ? spec[i] : '\0';
    std::string body;
    if (type == 'f' || type == 'F' || type == 'e' || type == 'g' || type == '%') {
        double d = v.is_number() ? v.to_double() : 0.0;
        if (type == '%') d *= 100;
        // Room for every digit: up to 309 before the point, `precision` after it.
        std::vector<char> buf(static_cast<std::size_t>(std::max(precision, 6)) + 400);
        char t = type == '%' ? 'f' : type;
        std::string f = "%." + std::to_string(precision < 0 ? 6 : precision) + t;
        std::snprintf(buf.data(), buf.size(), f.c_str(), d);
        body = buf.data();
        if (type == '%') body += '%';
    } else if (type == 'd') {
        body = v.is_number() ? std::to_string(static_cast<long long>(v.is_float() ? v.as_float() : static_cast<double>(v.is_bool() ? v.as_bool() : v.as_int()))) : v.str();
    } else if (type == 'x') {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%llx", static_cast<long long>(v.is_int() ? v.as_int() : 0));
        body = buf;
    } else {
        body = v.str();
        if (precision >= 0 && v.is_string()) {
            auto off = codepoint_offsets(body);
            if (static_cast<std::size_t>(precision) + 1 < off.size()) body.resize(off[static_cast<std::size_t>(precision)]);
        } else if (precision >= 0 && v.is_float()) {
            std::vector<char> buf(static_cast<std::size_t>(precision) + 400);
            std::snprintf(buf.data(), buf.size(), "%.*g", precision, v.as_float());
            body = buf.data();
        }
    }
    std::size_t n = codepoint_count(body);
    if (n >= width) return body;
    std::size_t pad = width - n;
    if (zero && !align) return std::string(pad, '0') + body;
    if (!align) align = v.is_number() ? '>' : '<';
    if (align == '<') return body + std::string(pad, fill);
    if (align == '>') return std::string(pad, fill) + body;
    return std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
}

}  // namespace

std::string py_format(std::string_view fmt, const CallArgs& args) {
    std::string out;
    std::size_t auto_index = 0;
    for (std::size_t i = 0; i < fmt.size(); ++i) {
        char c = fmt[i];
        if (c == '{' && i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        if (c == '}' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
            out += '}';
            ++i;
            continue;
        }
        if (c != '{') {
            out += c;
            continue;
        }
        std::size_t close = fmt.find('}', i);
        if (close == std::string_view::npos) fail("Single '{' encountered in format string");
        std::string_view field = fmt.substr(i + 1, close - i - 1);
        std::string_view spec;
        if (auto colon = field.find(':'); colon != std::string_view::npos) {
            spec = field.substr(colon + 1);
            field = field.substr(0, colon);
        }
        if (auto bang = field.find('!'); bang != std::string_view::npos) field = field.substr(0, bang);
        const Value* v = nullptr;
        if (field.empty()) {
            if (auto_index >= args.positional.size()) fail("Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
            v = &args.positional[auto_index++];
        } else if (field[0] >= '0' && field[0] <= '9') {
            std::size_t idx = static_cast<std::size_t>(std::stoul(std::string(field)));
            if (idx >= args.positional.size()) fail("Replacement index " + std::to_string(idx) + " out of range for positional args tuple");
            v = &args.positional[idx];
        } else {
            for (const auto& [k, kv] : args.keyword)
                if (k == field) v = &kv;
            if (!v) fail("KeyError: '" + std::string(field) + "'");
        }
        out += apply_spec(*v, spec);
        sandbox_check_text(out.size());
        i = close;
    }
    return out;
}

std::string py_percent_format(std::string_view fmt, const std::vector<Value>& args) {
    std::string out;
    std::size_t next = 0;
    for (std::size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size()) fail("incomplete format");
        if (fmt[i] == '%') {
            out += '%';
            continue;
        }
        std::string flags;
        while (i < fmt.size() && (fmt[i] == '-' || fmt[i] == '+' || fmt[i] == ' ' || fmt[i] == '0' || fmt[i] == '#'))
            flags += fmt[i++];
        std::string width;
        while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') width += fmt[i++];
        std::string precision;
        if (i < fmt.size() && fmt[i] == '.') {
            precision = ".";
            ++i;
            while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') precision += fmt[i++];
        }
        // Widths and precisions beyond kMaxFormatWidth are refused (snprintf would truncate).
        if (width.size() > 5 || precision.size() > 6 || (!width.empty() && std::stoul(width) > kMaxFormatWidth) ||
            (precision.size() > 1 && std::stoul(precision.substr(1)) > kMaxFormatWidth))
            fail("format width or precision larger than " + std::to_string(kMaxFormatWidth));
        std::vector<char> buffer(2 * kMaxFormatWidth + 512);
        char* const buf = buffer.data();
        if (i >= fmt.size()) fail("incomplete format");
        char type = fmt[i];
        if (next >= args.size()) fail("not enough arguments for format string");
        const Value& v = args[next++];
        std::string spec = "%" + flags + width + precision;
        switch (type) {
            case 's':
            case 'r': {
                std::string s = type == 's' ? v.str() : v.repr();
                std::string f = spec + "s";
                std::vector<char> big(s.size() + kMaxFormatWidth + 128);
                std::snprintf(big.data(), big.size(), f.c_str(), s.c_str());
                out += big.data();
                break;
            }
            case 'd':
            case 'i': {
                if (!v.is_number()) fail("%d format: a real number is required, not " + v.type_name());
                long long n = v.is_float() ? static_cast<long long>(v.as_float()) : (v.is_bool() ? v.as_bool() : v.as_int());
                std::snprintf(buf, buffer.size(), (spec + "lld").c_str(), n);
                out += buf;
                break;
            }
            case 'x':
            case 'X':
            case 'o': {
                if (!v.is_int()) fail("%x format: an integer is required, not " + v.type_name());
                std::snprintf(buf, buffer.size(), (spec + "ll" + type).c_str(), static_cast<long long>(v.as_int()));
                out += buf;
                break;
            }
            case 'f':
            case 'F':
            case 'e':
            case 'E':
            case 'g':
            case 'G': {
                if (!v.is_number()) fail("must be real number, not " + v.type_name());
                std::snprintf(buf, buffer.size(), (spec + type).c_str(), v.to_double());
                out += buf;
                break;
            }
            default: fail(std::string("unsupported format character '") + type + "'");
        }
        sandbox_check_text(out.size());
    }
    if (next < args.size()) fail("not all arguments converted during string formatting");
    return out;
}

}  // namespace ember::jinja

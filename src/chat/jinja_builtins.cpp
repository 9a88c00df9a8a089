#include "chat/jinja_builtins.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/jinja_strings.hpp"
#include "runtime/fail.hpp"

namespace ember::jinja {

namespace {

using Items = std::vector<Value>;

// Attribute path "a.b.0" looked up as Jinja's make_attrgetter does (getitem per part).
Value get_path(const Value& item, const std::string& path, const RenderLimits& limits) {
    Value cur = item;
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t dot = path.find('.', start);
        std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (cur.is_undefined()) return cur;
        bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
        cur = numeric ? get_item(cur, Value(static_cast<std::int64_t>(std::stoll(part))), limits)
                      : get_item(cur, Value(part), limits);
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    return cur;
}

Value lower_if_string(const Value& v, bool case_sensitive) {
    if (!case_sensitive && v.is_string()) return Value(py_lower(v.as_string()));
    return v;
}

void sort_values(Items& items, bool reverse, bool case_sensitive, const std::string* attribute,
                 const RenderLimits& limits) {
    std::vector<std::pair<Value, Value>> keyed;
    keyed.reserve(items.size());
    for (auto& v : items) {
        Value key = attribute ? get_path(v, *attribute, limits) : v;
        keyed.emplace_back(lower_if_string(key, case_sensitive), v);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
        return reverse ? compare(b.first, a.first, "<") : compare(a.first, b.first, "<");
    });
    for (std::size_t i = 0; i < items.size(); ++i) items[i] = keyed[i].second;
}

std::string indent_text(const std::string& s, const std::string& pad, bool first, bool blank) {
    std::vector<std::string> lines = py_splitlines(s + "\n");
    std::string rv;
    if (blank) {
        for (std::size_t i = 0; i < lines.size(); ++i) {
            if (i) rv += "\n" + pad;
            rv += lines[i];
            sandbox_check_text(rv.size());
        }
    } else if (!lines.empty()) {
        rv = lines[0];
        for (std::size_t i = 1; i < lines.size(); ++i) {
            rv += "\n";
            if (!lines[i].empty()) rv += pad;
            rv += lines[i];
            sandbox_check_text(rv.size());
        }
    }
    if (first) rv = pad + rv;
    return rv;
}

std::string strip_tags(const std::string& s) {
    std::string no_tags;
    for (std::size_t i = 0; i < s.size();) {
        if (s.compare(i, 4, "<!--") == 0) {
            std::size_t e = s.find("-->", i + 4);
            if (e == std::string::npos) break;
            i = e + 3;
        } else if (s[i] == '<') {
            std::size_t e = s.find('>', i + 1);
            if (e == std::string::npos) {
                no_tags += s.substr(i);
                break;
            }
            i = e + 1;
        } else {
            no_tags += s[i++];
        }
    }
    std::string out;
    for (const auto& w : py_split(no_tags, std::nullopt, -1)) {
        if (!out.empty()) out += ' ';
        out += w;
    }
    // markupsafe unescapes the common entities.
    static const std::pair<const char*, const char*> kEntities[] = {
        {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#34;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}};
    for (const auto& [from, to] : kEntities) out = py_replace(out, from, to, -1, SIZE_MAX);
    return out;
}

std::optional<std::int64_t> parse_int(std::string s, int base) {
    s = py_strip(s, std::nullopt, StripSide::both);
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    if (s.empty()) return std::nullopt;
    std::size_t i = 0;
    bool neg = false;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (base == 16 && s.compare(i, 2, "0x") == 0) i += 2;
    else if (base == 8 && s.compare(i, 2, "0o") == 0) i += 2;
    else if (base == 2 && s.compare(i, 2, "0b") == 0) i += 2;
    if (i >= s.size()) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str() + i, &end, base);
    if (errno != 0 || *end != '\0' || s[i] == '+' || s[i] == '-' || s[i] == ' ') return std::nullopt;
    return neg ? -v : v;
}

std::optional<double> parse_float(const std::string& text) {
    std::string s = py_strip(text, std::nullopt, StripSide::both);
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (*end != '\0') return std::nullopt;
    return d;
}

Value to_int(const Value& v, const Value& fallback, int base) {
    if (v.is_int()) return v;
    if (v.is_bool()) return Value(static_cast<std::int64_t>(v.as_bool()));
    if (v.is_float()) {
        double d = v.as_float();
        if (std::isfinite(d) && std::fabs(d) < 9.2e18) return Value(static_cast<std::int64_t>(d));
        return fallback;
    }
    if (v.is_string()) {
        if (auto i = parse_int(v.as_string(), base)) return Value(*i);
        if (auto d = parse_float(v.as_string()); d && std::isfinite(*d) && std::fabs(*d) < 9.2e18)
            return Value(static_cast<std::int64_t>(*d));
    }
    return fallback;
}

Value to_float(const Value& v, const Value& fallback) {
    if (v.is_number()) return Value(v.to_double());
    if (v.is_string()) {
        if (auto d = parse_float(v.as_string())) return Value(*d);
    }
    return fallback;
}

double round_to(double x, std::int64_t precision) {
    if (!std::isfinite(x)) return x;
    if (precision < 0) {
        double scale = std::pow(10.0, static_cast<double>(-precision));
        return std::nearbyint(x / scale) * scale;
    }
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(std::min<std::int64_t>(precision, 300)), x);
    return std::strtod(buf, nullptr);
}

json::Value sorted_keys(const json::Value& v) {
    if (v.is_array()) {
        json::Value out = json::Value::array();
        for (const auto& e : v) out.push_back(sorted_keys(e));
        return out;
    }
    if (!v.is_object()) return v;
    std::vector<std::pair<std::string, const json::Value*>> items;
    for (const auto& item : v.items()) items.emplace_back(item.key(), &item.value());
    std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    json::Value out = json::Value::object();
    for (const auto& [k, e] : items) out[k] = sorted_keys(*e);
    return out;
}

std::string ascii_escape(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            out += s[i++];
            continue;
        }
        std::uint32_t cp;
        std::size_t n;
        if (c >= 0xF0) {
            cp = c & 0x07u;
            n = 4;
        } else if (c >= 0xE0) {
            cp = c & 0x0Fu;
            n = 3;
        } else {
            cp = c & 0x1Fu;
            n = 2;
        }
        for (std::size_t k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3Fu);
        i += n;
        char buf[16];
        if (cp >= 0x10000) {
            cp -= 0x10000;
            std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
        } else {
            std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
        }
        out += buf;
    }
    return out;
}

Value select_or_reject(const Value& seq, const CallArgs& args, bool select, bool by_attribute,
                       const RenderLimits& limits) {
    Items out;
    std::size_t first_test_arg = by_attribute ? 1 : 0;
    std::string attribute;
    if (by_attribute) {
        if (args.positional.empty() || !args.positional[0].is_string()) fail("selectattr/rejectattr need an attribute name");
        attribute = args.positional[0].as_string();
    }
    std::optional<std::string> test;
    CallArgs test_args;
    if (args.positional.size() > first_test_arg) {
        if (!args.positional[first_test_arg].is_string()) fail("the test name must be a string");
        test = args.positional[first_test_arg].as_string();
        test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(first_test_arg) + 1,
                                    args.positional.end());
        test_args.keyword = args.keyword;
    }
    for (const auto& item : iterate(seq)) {
        Value subject = by_attribute ? get_path(item, attribute, limits) : item;
        bool ok = test ? apply_test(*test, subject, test_args, limits) : subject.truthy();
        if (ok == select) out.push_back(item);
    }
    return make_list(std::move(out));
}

Value min_max(const Value& seq, const ArgReader& r, bool want_max, const RenderLimits& limits) {
    Items items = iterate(seq);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    bool cs = r.get_bool(0, "case_sensitive", false);
    auto attr = r.get_string(1, "attribute");
    std::size_t best = 0;
    auto key = [&](const Value& v) { return lower_if_string(attr ? get_path(v, *attr, limits) : v, cs); };
    Value best_key = key(items[0]);
    for (std::size_t i = 1; i < items.size(); ++i) {
        Value k = key(items[i]);
        if (want_max ? compare(k, best_key, ">") : compare(k, best_key, "<")) {
            best = i;
            best_key = k;
        }
    }
    return items[best];
}

}  // namespace

std::string to_json_text(const Value& value, int indent, bool ensure_ascii, bool sort_keys) {
    json::Value j = to_json(value);
    if (sort_keys) j = sorted_keys(std::move(j));
    std::string out = json::dump(j, indent);
    return ensure_ascii ? ascii_escape(out) : out;
}

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args, const RenderLimits& limits) {
    ArgReader r(args, name);
    auto text = [&]() { return value.str(); };
    auto checked = [&](std::string s) {
        check_size(limits, s.size());
        return Value(std::move(s));
    };

    if (name == "default" || name == "d") {
        Value fallback = r.get(0, "default_value", Value(""));
        bool boolean = r.get_bool(1, "boolean", false);
        if (value.is_undefined() || (boolean && !value.truthy())) return fallback;
        return value;
    }
    if (name == "length" || name == "count") return Value(length(value));
    if (name == "string") return Value(text());
    if (name == "safe") return Value(text());
    if (name == "trim") return Value(py_strip(text(), r.get_string(0, "chars"), StripSide::both));
    if (name == "upper") return Value(py_upper(text()));
    if (name == "lower") return Value(py_lower(text()));
    if (name == "title") return Value(jinja_title(text()));
    if (name == "capitalize") return Value(py_capitalize(text()));
    if (name == "escape" || name == "e" || name == "forceescape") return Value(html_escape(text()));
    if (name == "striptags") return Value(strip_tags(text()));
    if (name == "wordcount") {
        std::int64_t n = 0;
        bool in_word = false;
        for (char c : text()) {
            bool w = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                     (static_cast<unsigned char>(c) >= 0x80);
            if (w && !in_word) ++n;
            in_word = w;
        }
        return Value(n);
    }
    if (name == "tojson") {
        if (value.is_undefined()) fail("Object of type Undefined is not JSON serializable");
        // HF signature: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
        int indent = -1;
        if (const Value* v = r.find(1, "indent"); v && !v->is_none()) {
            if (!v->is_int()) fail("tojson: indent must be an integer");
            indent = static_cast<int>(std::clamp<std::int64_t>(v->as_int(), 0, 64));
        }
        if (const Value* v = r.find(2, "separators"); v && !v->is_none())
            fail("tojson: custom separators are not supported");
        bool ensure_ascii = r.get_bool(0, "ensure_ascii", false);
        bool sort_keys = r.get_bool(3, "sort_keys", false);
        // Indentation repeats per item and level, and escapes take up to 6 bytes per byte: refuse
        // before dumping when the text could not fit in a few times the limit.
        const Weight w = value.weight();
        const std::uint64_t bound = w.items * (static_cast<std::uint64_t>(std::max(indent, 0)) * (w.depth + 1) + 32) + 6 * w.bytes;
        if (bound > 8 * static_cast<std::uint64_t>(limits.max_output_bytes)) check_size(limits, limits.max_output_bytes + 1);
        return checked(to_json_text(value, indent, ensure_ascii, sort_keys));
    }
    if (name == "items") {
        if (value.is_undefined()) return make_list({});
        if (!value.is_dict()) fail("Can only get item pairs from a mapping.");
        Items pairs;
        for (const auto& [k, v] : value.as_dict()->items) pairs.push_back(make_list({Value(k), v}, true));
        return make_list(std::move(pairs));
    }
    if (name == "list") return make_list(iterate(value));
    if (name == "first" || name == "last") {
        Items items = iterate(value);
        if (items.empty())
            return Value::undefined(name == "first" ? "No first item, sequence was empty." : "No last item, sequence was empty.");
        return name == "first" ? items.front() : items.back();
    }
    if (name == "join") {
        auto attr = r.get_string(1, "attribute");
        Value sep = r.get(0, "d", Value(""));
        std::string sep_text = sep.str();
        std::string out;
        bool first = true;
        for (const auto& item : iterate(value)) {
            if (!first) out += sep_text;
            first = false;
            out += (attr ? get_path(item, *attr, limits) : item).str();
            check_size(limits, out.size());
        }
        return Value(std::move(out));
    }
    if (name == "replace") {
        Value from = r.get(0, "old"), to = r.get(1, "new");
        std::int64_t count = r.get_int(2, "count", -1);
        return Value(py_replace(text(), from.str(), to.str(), count, limits.max_output_bytes));
    }
    if (name == "int") {
        Value fallback = r.get(0, "default", Value(std::int64_t{0}));
        return to_int(value, fallback, static_cast<int>(r.get_int(1, "base", 10)));
    }
    if (name == "float") return to_float(value, r.get(0, "default", Value(0.0)));
    if (name == "abs") {
        require_defined(value);
        if (value.is_float()) return Value(std::fabs(value.as_float()));
        if (value.is_int() || value.is_bool()) {
            std::int64_t x = value.is_bool() ? value.as_bool() : value.as_int();
            if (x == INT64_MIN) fail("integer overflow in abs");
            return Value(x < 0 ? -x : x);
        }
        fail("bad operand type for abs(): '" + value.type_name() + "'");
    }
    if (name == "round") {
        require_defined(value);
        std::int64_t precision = r.get_int(0, "precision", 0);
        std::string method = r.get_string(1, "method").value_or("common");
        if (!value.is_number()) fail("type " + value.type_name() + " doesn't define __round__ method");
        if (method == "common") {
            if (!value.is_float()) return Value(value.is_bool() ? static_cast<std::int64_t>(value.as_bool()) : value.as_int());
            return Value(round_to(value.as_float(), precision));
        }
        if (method != "ceil" && method != "floor") fail("method must be common, ceil or floor");
        double scale = std::pow(10.0, static_cast<double>(precision));
        double x = value.to_double() * scale;
        return Value((method == "ceil" ? std::ceil(x) : std::floor(x)) / scale);
    }
    if (name == "indent") {
        Value width = r.get(0, "width", Value(std::int64_t{4}));
        std::string pad = width.is_string() ? width.as_string()
                                            : std::string(static_cast<std::size_t>(std::clamp<std::int64_t>(
                                                              width.is_int() ? width.as_int() : 4, 0, 1024)), ' ');
        return checked(indent_text(text(), pad, r.get_bool(1, "first", false), r.get_bool(2, "blank", false)));
    }
    if (name == "center") {
        std::int64_t width = r.get_int(0, "width", 80);
        std::string s = text();
        auto n = static_cast<std::int64_t>(codepoint_count(s));
        if (width <= n) return Value(s);
        check_size(limits, static_cast<std::size_t>(width));
        std::int64_t pad = width - n;
        std::int64_t left = pad / 2 + (pad & width & 1);  // CPython's centering rule
        return Value(std::string(static_cast<std::size_t>(left), ' ') + s +
                     std::string(static_cast<std::size_t>(pad - left), ' '));
    }
    if (name == "format") {
        if (!args.keyword.empty()) fail("format filter with keyword arguments is not supported");
        return checked(py_percent_format(text(), args.positional));
    }
    if (name == "reverse") {
        if (value.is_string()) {
            auto items = iterate(value);
            std::string out;
            for (auto it = items.rbegin(); it != items.rend(); ++it) out += it->as_string();
            return Value(std::move(out));
        }
        Items items = iterate(value);
        std::reverse(items.begin(), items.end());
        return make_list(std::move(items));
    }
    if (name == "sort") {
        Items items = iterate(value);
        auto attr = r.get_string(2, "attribute");
        sort_values(items, r.get_bool(0, "reverse", false), r.get_bool(1, "case_sensitive", false),
                    attr ? &*attr : nullptr, limits);
        return make_list(std::move(items));
    }
    if (name == "dictsort") {
        if (!value.is_dict()) fail("dictsort: expected a mapping");
        bool cs = r.get_bool(0, "case_sensitive", false);
        std::string by = r.get_string(1, "by").value_or("key");
        bool reverse = r.get_bool(2, "reverse", false);
        Items pairs;
        for (const auto& [k, v] : value.as_dict()->items) pairs.push_back(make_list({Value(k), v}, true));
        std::size_t pos = by == "value" ? 1 : 0;
        std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
            Value x = lower_if_string(a.as_list()->items[pos], cs), y = lower_if_string(b.as_list()->items[pos], cs);
            return reverse ? compare(y, x, "<") : compare(x, y, "<");
        });
        return make_list(std::move(pairs));
    }
    if (name == "unique") {
        bool cs = r.get_bool(0, "case_sensitive", false);
        auto attr = r.get_string(1, "attribute");
        Items out, seen;
        for (const auto& item : iterate(value)) {
            Value key = lower_if_string(attr ? get_path(item, *attr, limits) : item, cs);
            bool dup = std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); });
            if (dup) continue;
            seen.push_back(key);
            out.push_back(item);
        }
        return make_list(std::move(out));
    }
    if (name == "min" || name == "max") return min_max(value, r, name == "max", limits);
    if (name == "sum") {
        auto attr = r.get_string(0, "attribute");
        Value total = r.get(1, "start", Value(std::int64_t{0}));
        for (const auto& item : iterate(value)) total = binary_op("+", total, attr ? get_path(item, *attr, limits) : item, limits);
        return total;
    }
    if (name == "map") {
        Items out;
        if (auto attr = r.get_string(99, "attribute")) {
            Value fallback = r.get(99, "default");
            for (const auto& item : iterate(value)) {
                Value v = get_path(item, *attr, limits);
                out.push_back(v.is_undefined() && r.find(99, "default") ? fallback : v);
            }
            return make_list(std::move(out));
        }
        if (args.positional.empty() || !args.positional[0].is_string()) fail("map: expected a filter name or attribute=");
        std::string filter = args.positional[0].as_string();
        CallArgs rest;
        rest.positional.assign(args.positional.begin() + 1, args.positional.end());
        rest.keyword = args.keyword;
        for (const auto& item : iterate(value)) out.push_back(apply_filter(filter, item, rest, limits));
        return make_list(std::move(out));
    }
    if (name == "select") return select_or_reject(value, args, true, false, limits);
    if (name == "reject") return select_or_reject(value, args, false, false, limits);
    if (name == "selectattr") return select_or_reject(value, args, true, true, limits);
    if (name == "rejectattr") return select_or_reject(value, args, false, true, limits);
    if (name == "attr") {
        auto attr = r.get_string(0, "name");
        if (!attr) fail("attr: expected an attribute name");
        return get_attribute(value, *attr, limits);
    }
    if (name == "pprint") return Value(value.repr());
    if (name == "batch") {
        std::int64_t size = r.get_int(0, "linecount", 0);
        if (size <= 0) fail("batch: linecount must be positive");
        Items out, cur;
        for (const auto& item : iterate(value)) {
            cur.push_back(item);
            if (static_cast<std::int64_t>(cur.size()) == size) {
                out.push_back(make_list(std::move(cur)));
                cur.clear();
            }
        }
        if (!cur.empty()) {
            if (const Value* fill = r.find(1, "fill_with"); fill && !fill->is_none())
                while (static_cast<std::int64_t>(cur.size()) < size) cur.push_back(*fill);
            out.push_back(make_list(std::move(cur)));
        }
        return make_list(std::move(out));
    }
    fail("No filter named '" + name + "'.");
}

bool apply_test(const std::string& name, const Value& value, const CallArgs& args, const RenderLimits& limits) {
    ArgReader r(args, name);
    auto arg = [&]() {
        const Value* v = r.find(0, "other");
        if (!v) fail("test '" + name + "' needs an argument");
        return *v;
    };
    if (name == "defined") return !value.is_undefined();
    if (name == "undefined") return value.is_undefined();
    if (name == "none") return value.is_none();
    if (name == "boolean") return value.is_bool();
    if (name == "true") return value.is_bool() && value.as_bool();
    if (name == "false") return value.is_bool() && !value.as_bool();
    if (name == "integer") return value.is_int();
    if (name == "float") return value.is_float();
    if (name == "number") return value.is_number();
    if (name == "string") return value.is_string();
    if (name == "mapping") return value.is_dict() && value.as_dict()->kind == Dict::Kind::plain;
    if (name == "iterable") return value.is_undefined() || value.is_list() || value.is_string() ||
                                   (value.is_dict() && value.as_dict()->kind == Dict::Kind::plain);
    if (name == "sequence") return value.is_undefined() || value.is_list() || value.is_string() ||
                                   (value.is_dict() && value.as_dict()->kind == Dict::Kind::plain);
    if (name == "callable") return value.is_callable();
    if (name == "escaped") return false;
    if (name == "lower") return value.is_string() && py_lower(value.as_string()) == value.as_string();
    if (name == "upper") return value.is_string() && py_upper(value.as_string()) == value.as_string();
    if (name == "odd" || name == "even") {
        require_defined(value);
        if (!value.is_int() && !value.is_bool()) fail("test '" + name + "' needs an integer, got " + value.type_name());
        std::int64_t x = value.is_bool() ? value.as_bool() : value.as_int();
        return (x % 2 != 0) == (name == "odd");
    }
    if (name == "divisibleby") {
        Value d = arg();
        return binary_op("%", value, d, limits).truthy() == false;
    }
    if (name == "eq" || name == "equalto" || name == "==") return equals(value, arg());
    if (name == "ne" || name == "!=") return !equals(value, arg());
    if (name == "lt" || name == "lessthan" || name == "<") return compare(value, arg(), "<");
    if (name == "le" || name == "<=") return compare(value, arg(), "<=");
    if (name == "gt" || name == "greaterthan" || name == ">") return compare(value, arg(), ">");
    if (name == "ge" || name == ">=") return compare(value, arg(), ">=");
    if (name == "in") return contains(arg(), value);
    if (name == "sameas") {
        Value other = arg();
        if (value.kind() != other.kind()) return false;
        switch (value.kind()) {
            case Value::Kind::none:
            case Value::Kind::undefined: return true;
            case Value::Kind::boolean: return value.as_bool() == other.as_bool();
            case Value::Kind::list: return value.as_list() == other.as_list();
            case Value::Kind::dict: return value.as_dict() == other.as_dict();
            case Value::Kind::callable: return value.as_callable() == other.as_callable();
            default: return equals(value, other);
        }
    }
    fail("No test named '" + name + "'.");
}

}  // namespace ember::jinja

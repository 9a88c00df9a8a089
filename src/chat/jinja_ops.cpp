#include "chat/jinja_ops.hpp"

#include <cmath>

#include "chat/jinja_strings.hpp"
#include "runtime/fail.hpp"

namespace ember::jinja {

void check_size(const RenderLimits& limits, std::size_t n) {
    if (n > limits.max_output_bytes)
        fail("value larger than the template output limit (" + std::to_string(limits.max_output_bytes) + " bytes)");
}

void require_defined(const Value& v) {
    if (v.is_undefined()) fail(v.undefined_message());
}

std::string object_type_repr(const Value& v) {
    if (v.is_none()) return "None";
    if (v.is_dict() && v.as_dict()->kind == Dict::Kind::namespace_object) return "jinja2.utils.Namespace object";
    if (v.is_dict() && v.as_dict()->kind == Dict::Kind::loop) return "jinja2.runtime.LoopContext object";
    return v.type_name() + " object";
}

// ---- arguments -------------------------------------------------------------------------------

const Value* ArgReader::find(std::size_t index, std::string_view name) const {
    if (index < args_.positional.size()) return &args_.positional[index];
    for (const auto& [k, v] : args_.keyword)
        if (k == name) return &v;
    return nullptr;
}

Value ArgReader::get(std::size_t index, std::string_view name, Value fallback) const {
    const Value* v = find(index, name);
    return v ? *v : fallback;
}

std::int64_t ArgReader::get_int(std::size_t index, std::string_view name, std::int64_t fallback) const {
    const Value* v = find(index, name);
    if (!v || v->is_none()) return fallback;
    if (v->is_int()) return v->as_int();
    if (v->is_bool()) return v->as_bool();
    fail(function_ + "(): argument '" + std::string(name) + "' must be an integer, not " + v->type_name());
}

bool ArgReader::get_bool(std::size_t index, std::string_view name, bool fallback) const {
    const Value* v = find(index, name);
    return v ? v->truthy() : fallback;
}

std::optional<std::string> ArgReader::get_string(std::size_t index, std::string_view name) const {
    const Value* v = find(index, name);
    if (!v || v->is_none()) return std::nullopt;
    if (v->is_undefined()) require_defined(*v);
    if (!v->is_string())
        fail(function_ + "(): argument '" + std::string(name) + "' must be str, not " + v->type_name());
    return v->as_string();
}

void ArgReader::max_positional(std::size_t n) const {
    if (args_.positional.size() > n)
        fail(function_ + "() takes at most " + std::to_string(n) + " positional argument(s) (" +
             std::to_string(args_.positional.size()) + " given)");
}

// ---- iteration -----------------------------------------------------------------------------

std::vector<Value> iterate(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::undefined: return {};
        case Value::Kind::list: return v.as_list()->items;
        case Value::Kind::dict: {
            std::vector<Value> keys;
            if (v.as_dict()->kind != Dict::Kind::plain) fail("'" + v.type_name() + "' object is not iterable");
            for (const auto& [k, e] : v.as_dict()->items) keys.emplace_back(k);
            return keys;
        }
        case Value::Kind::string: {
            const std::string& s = v.as_string();
            sandbox_check_items(codepoint_count(s));
            auto off = codepoint_offsets(s);
            std::vector<Value> chars;
            for (std::size_t i = 0; i + 1 < off.size(); ++i) chars.emplace_back(s.substr(off[i], off[i + 1] - off[i]));
            return chars;
        }
        default: fail("'" + v.type_name() + "' object is not iterable");
    }
}

std::int64_t length(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::undefined: return 0;
        case Value::Kind::string: return static_cast<std::int64_t>(codepoint_count(v.as_string()));
        case Value::Kind::list: return static_cast<std::int64_t>(v.as_list()->items.size());
        case Value::Kind::dict: return static_cast<std::int64_t>(v.as_dict()->items.size());
        default: fail("object of type '" + v.type_name() + "' has no len()");
    }
}

bool contains(const Value& container, const Value& needle) {
    switch (container.kind()) {
        case Value::Kind::undefined: return false;
        case Value::Kind::string:
            if (!needle.is_string()) {
                require_defined(needle);
                fail("'in <string>' requires string as left operand, not " + needle.type_name());
            }
            return container.as_string().find(needle.as_string()) != std::string::npos;
        case Value::Kind::list:
            for (const auto& e : container.as_list()->items)
                if (equals(e, needle)) return true;
            return false;
        case Value::Kind::dict:
            if (!needle.is_string()) return false;
            return container.as_dict()->find(needle.as_string()) != nullptr;
        default: fail("argument of type '" + container.type_name() + "' is not iterable");
    }
}

// ---- attribute and item access -------------------------------------------------------------

namespace {

Value missing_attribute(const Value& obj, const std::string& name) {
    std::string message(1, '\'');
    message.append(object_type_repr(obj)).append("' has no attribute '").append(name).append("'");
    return Value::undefined(std::move(message));
}

Value missing_element(const Value& obj, const Value& key) {
    return Value::undefined(object_type_repr(obj) + " has no element " + key.repr());
}

std::optional<std::int64_t> as_index(const Value& v) {
    if (v.is_int()) return v.as_int();
    if (v.is_bool()) return v.as_bool() ? 1 : 0;
    return std::nullopt;
}

Value loop_or_namespace_attribute(const Value& obj, const std::string& name) {
    if (const Value* v = obj.as_dict()->find(name)) return *v;
    return missing_attribute(obj, name);
}

Value items_of(const Dict& d) {
    std::vector<Value> pairs;
    pairs.reserve(d.items.size());
    for (const auto& [k, v] : d.items) pairs.push_back(make_list({Value(k), v}, true));
    return make_list(std::move(pairs));
}

Value string_list(const std::vector<std::string>& parts) {
    std::vector<Value> out;
    out.reserve(parts.size());
    for (const auto& p : parts) out.emplace_back(p);
    return make_list(std::move(out));
}

bool prefix_match(const std::string& s, const Value& arg, bool suffix, const std::string& fn) {
    auto test = [&](const Value& p) {
        if (!p.is_string()) fail(fn + " first arg must be str or a tuple of str, not " + p.type_name());
        const std::string& x = p.as_string();
        if (x.size() > s.size()) return false;
        return suffix ? s.compare(s.size() - x.size(), x.size(), x) == 0 : s.compare(0, x.size(), x) == 0;
    };
    if (arg.is_list()) {
        for (const auto& p : arg.as_list()->items)
            if (test(p)) return true;
        return false;
    }
    return test(arg);
}

Value string_method(const std::string& s, const std::string& name, const RenderLimits& limits) {
    auto method = [&](auto fn) {
        return make_callable("str." + name, [s, name, fn, &limits](CallArgs& a) -> Value {
            ArgReader r(a, name);
            return fn(r, a);
        });
    };
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        StripSide side = name == "strip" ? StripSide::both : (name == "lstrip" ? StripSide::left : StripSide::right);
        return method([s, side](ArgReader& r, CallArgs&) { return Value(py_strip(s, r.get_string(0, "chars"), side)); });
    }
    if (name == "split" || name == "rsplit") {
        bool right = name == "rsplit";
        return method([s, right](ArgReader& r, CallArgs&) {
            auto sep = r.get_string(0, "sep");
            auto maxsplit = r.get_int(1, "maxsplit", -1);
            return string_list(right ? py_rsplit(s, sep, maxsplit) : py_split(s, sep, maxsplit));
        });
    }
    if (name == "splitlines") return method([s](ArgReader&, CallArgs&) { return string_list(py_splitlines(s)); });
    if (name == "startswith" || name == "endswith") {
        bool suffix = name == "endswith";
        return method([s, suffix, name](ArgReader& r, CallArgs&) {
            const Value* p = r.find(0, "prefix");
            if (!p) fail(name + "() takes at least 1 argument (0 given)");
            return Value(prefix_match(s, *p, suffix, name));
        });
    }
    if (name == "upper") return method([s](ArgReader&, CallArgs&) { return Value(py_upper(s)); });
    if (name == "lower") return method([s](ArgReader&, CallArgs&) { return Value(py_lower(s)); });
    if (name == "title") return method([s](ArgReader&, CallArgs&) { return Value(py_title(s)); });
    if (name == "capitalize") return method([s](ArgReader&, CallArgs&) { return Value(py_capitalize(s)); });
    if (name == "replace") {
        return method([s, &limits](ArgReader& r, CallArgs&) {
            auto from = r.get_string(0, "old");
            auto to = r.get_string(1, "new");
            if (!from || !to) fail("replace() takes at least 2 arguments");
            return Value(py_replace(s, *from, *to, r.get_int(2, "count", -1), limits.max_output_bytes));
        });
    }
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
        return method([s, name](ArgReader& r, CallArgs&) -> Value {
            auto sub = r.get_string(0, "sub");
            if (!sub) fail(name + "() takes at least 1 argument (0 given)");
            if (name == "count") {
                if (sub->empty()) return Value(static_cast<std::int64_t>(codepoint_count(s) + 1));
                std::int64_t n = 0;
                for (std::size_t p = s.find(*sub); p != std::string::npos; p = s.find(*sub, p + sub->size())) ++n;
                return Value(n);
            }
            std::size_t p = (name == "find" || name == "index") ? s.find(*sub) : s.rfind(*sub);
            if (p == std::string::npos) {
                if (name == "index" || name == "rindex") fail("substring not found");
                return Value(std::int64_t{-1});
            }
            return Value(static_cast<std::int64_t>(codepoint_count(std::string_view(s).substr(0, p))));
        });
    }
    if (name == "join") {
        return method([s, &limits](ArgReader& r, CallArgs&) {
            std::string out;
            bool first = true;
            for (const auto& e : iterate(r.get(0, "iterable"))) {
                if (!e.is_string()) fail("sequence item: expected str instance, " + e.type_name() + " found");
                if (!first) out += s;
                first = false;
                out += e.as_string();
                check_size(limits, out.size());
            }
            return Value(std::move(out));
        });
    }
    if (name == "format") {
        return method([s, &limits](ArgReader&, CallArgs& a) {
            std::string out = py_format(s, a);
            check_size(limits, out.size());
            return Value(std::move(out));
        });
    }
    if (name == "isdigit" || name == "isalpha" || name == "isalnum" || name == "isspace" || name == "isupper" ||
        name == "islower") {
        return method([s, name](ArgReader&, CallArgs&) {
            if (s.empty()) return Value(false);
            bool any_cased = false;
            for (char c : s) {
                bool digit = c >= '0' && c <= '9';
                bool lower = c >= 'a' && c <= 'z';
                bool upper = c >= 'A' && c <= 'Z';
                if (name == "isdigit" && !digit) return Value(false);
                if (name == "isalpha" && !(lower || upper)) return Value(false);
                if (name == "isalnum" && !(lower || upper || digit)) return Value(false);
                if (name == "isspace" && !py_is_space_char(c)) return Value(false);
                if (name == "isupper" && lower) return Value(false);
                if (name == "islower" && upper) return Value(false);
                any_cased = any_cased || lower || upper;
            }
            if (name == "isupper" || name == "islower") return Value(any_cased);
            return Value(true);
        });
    }
    return Value();
}

Value dict_method(const std::shared_ptr<Dict>& d, const std::string& name) {
    if (name == "items") return make_callable("dict.items", [d](CallArgs&) { return items_of(*d); });
    if (name == "keys") {
        return make_callable("dict.keys", [d](CallArgs&) {
            std::vector<Value> keys;
            for (const auto& [k, v] : d->items) keys.emplace_back(k);
            return make_list(std::move(keys));
        });
    }
    if (name == "values") {
        return make_callable("dict.values", [d](CallArgs&) {
            std::vector<Value> values;
            for (const auto& [k, v] : d->items) values.push_back(v);
            return make_list(std::move(values));
        });
    }
    if (name == "get") {
        return make_callable("dict.get", [d](CallArgs& a) {
            ArgReader r(a, "get");
            Value key = r.get(0, "key");
            Value fallback = r.get(1, "default", Value::none());
            if (!key.is_string()) return fallback;
            const Value* v = d->find(key.as_string());
            return v ? *v : fallback;
        });
    }
    return Value();
}

Value list_method(const std::shared_ptr<List>& l, const std::string& name) {
    if (name == "index" || name == "count") {
        return make_callable("list." + name, [l, name](CallArgs& a) -> Value {
            ArgReader r(a, name);
            Value x = r.get(0, "value");
            std::int64_t n = 0;
            for (std::size_t i = 0; i < l->items.size(); ++i) {
                if (!equals(l->items[i], x)) continue;
                if (name == "index") return Value(static_cast<std::int64_t>(i));
                ++n;
            }
            if (name == "index") fail(x.repr() + " is not in list");
            return Value(n);
        });
    }
    static const char* const kMutating[] = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"};
    for (const char* m : kMutating)
        if (name == m)
            return Value::undefined("access to attribute '" + name + "' of '" + std::string(l->is_tuple ? "tuple" : "list") +
                                    "' object is unsafe.");
    return Value();
}

}  // namespace

Value get_method(const Value& obj, const std::string& name, const RenderLimits& limits) {
    if (obj.is_string()) return string_method(obj.as_string(), name, limits);
    if (obj.is_dict() && obj.as_dict()->kind == Dict::Kind::plain) {
        Value m = dict_method(obj.as_dict(), name);
        if (m.is_undefined() && (name == "update" || name == "pop" || name == "popitem" || name == "setdefault" ||
                                 name == "clear"))
            return Value::undefined("access to attribute '" + name + "' of 'dict' object is unsafe.");
        return m;
    }
    if (obj.is_list()) return list_method(obj.as_list(), name);
    return Value();
}

Value get_attribute(const Value& obj, const std::string& name, const RenderLimits& limits) {
    require_defined(obj);
    if (obj.is_dict()) {
        const auto& d = *obj.as_dict();
        if (d.kind != Dict::Kind::plain) return loop_or_namespace_attribute(obj, name);
        // Python getattr first (dict methods, including unsafe ones, win), then the key.
        Value m = get_method(obj, name, limits);
        if (!m.is_undefined() || !m.undefined_message().empty()) return m;
        if (const Value* v = d.find(name)) return *v;
        return missing_attribute(obj, name);
    }
    Value m = get_method(obj, name, limits);
    if (!m.is_undefined() || !m.undefined_message().empty()) return m;
    return missing_attribute(obj, name);
}

Value get_item(const Value& obj, const Value& key, const RenderLimits& limits) {
    require_defined(obj);
    if (key.is_undefined()) require_defined(key);
    switch (obj.kind()) {
        case Value::Kind::dict: {
            const auto& d = *obj.as_dict();
            if (key.is_string()) {
                if (d.kind == Dict::Kind::plain) {
                    if (const Value* v = d.find(key.as_string())) return *v;
                    Value m = get_method(obj, key.as_string(), limits);
                    if (!m.is_undefined()) return m;
                    return missing_attribute(obj, key.as_string());
                }
                return loop_or_namespace_attribute(obj, key.as_string());
            }
            return missing_element(obj, key);
        }
        case Value::Kind::list: {
            const auto& items = obj.as_list()->items;
            if (auto i = as_index(key)) {
                std::int64_t n = static_cast<std::int64_t>(items.size());
                std::int64_t idx = *i < 0 ? *i + n : *i;
                if (idx < 0 || idx >= n) return missing_element(obj, key);
                return items[static_cast<std::size_t>(idx)];
            }
            if (key.is_string()) return get_attribute(obj, key.as_string(), limits);
            return missing_element(obj, key);
        }
        case Value::Kind::string: {
            if (auto i = as_index(key)) {
                const std::string& s = obj.as_string();
                auto off = codepoint_offsets(s);
                std::int64_t n = static_cast<std::int64_t>(off.size() - 1);
                std::int64_t idx = *i < 0 ? *i + n : *i;
                if (idx < 0 || idx >= n) return missing_element(obj, key);
                auto u = static_cast<std::size_t>(idx);
                return Value(s.substr(off[u], off[u + 1] - off[u]));
            }
            if (key.is_string()) return get_attribute(obj, key.as_string(), limits);
            return missing_element(obj, key);
        }
        default:
            if (key.is_string()) return get_attribute(obj, key.as_string(), limits);
            return missing_element(obj, key);
    }
}

Value get_slice(const Value& obj, const Value& start_v, const Value& stop_v, const Value& step_v) {
    require_defined(obj);
    auto index_or_none = [](const Value& v) -> std::optional<std::int64_t> {
        if (v.is_none() || (v.is_undefined() && v.undefined_message().empty())) return std::nullopt;
        if (auto i = as_index(v)) return i;
        fail("slice indices must be integers or None or have an __index__ method");
    };
    auto start = index_or_none(start_v), stop = index_or_none(stop_v), step_o = index_or_none(step_v);
    std::int64_t step = step_o.value_or(1);
    if (step == 0) fail("slice step cannot be zero");
    std::int64_t n;
    std::vector<std::size_t> off;
    if (obj.is_list()) {
        n = static_cast<std::int64_t>(obj.as_list()->items.size());
    } else if (obj.is_string()) {
        off = codepoint_offsets(obj.as_string());
        n = static_cast<std::int64_t>(off.size() - 1);
    } else {
        fail("'" + obj.type_name() + "' object is not subscriptable");
    }
    auto adjust = [&](std::optional<std::int64_t> v, bool is_start) {
        if (!v) return step < 0 ? (is_start ? n - 1 : -1) : (is_start ? 0 : n);
        std::int64_t x = *v;
        if (x < 0) {
            x += n;
            if (x < 0) x = step < 0 ? -1 : 0;
        } else if (x >= n) {
            x = step < 0 ? n - 1 : n;
        }
        return x;
    };
    std::int64_t b = adjust(start, true), e = adjust(stop, false);
    std::vector<std::int64_t> picks;
    for (std::int64_t i = b; step > 0 ? i < e : i > e; i += step) picks.push_back(i);
    if (obj.is_list()) {
        std::vector<Value> items;
        items.reserve(picks.size());
        for (auto i : picks) items.push_back(obj.as_list()->items[static_cast<std::size_t>(i)]);
        return make_list(std::move(items), obj.as_list()->is_tuple);
    }
    const std::string& s = obj.as_string();
    std::string out;
    if (step == 1) {
        if (b < e) out = s.substr(off[static_cast<std::size_t>(b)], off[static_cast<std::size_t>(e)] - off[static_cast<std::size_t>(b)]);
        return Value(std::move(out));
    }
    for (auto i : picks) {
        auto u = static_cast<std::size_t>(i);
        out += s.substr(off[u], off[u + 1] - off[u]);
    }
    return Value(std::move(out));
}

// ---- arithmetic ----------------------------------------------------------------------------

namespace {

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
    require_defined(a);
    require_defined(b);
    if (op == "+" && a.is_string())
        fail("can only concatenate str (not \"" + b.type_name() + "\") to str");
    if (op == "+" && a.is_list())
        fail("can only concatenate " + a.type_name() + " (not \"" + b.type_name() + "\") to " + a.type_name());
    fail("unsupported operand type(s) for " + std::string(op) + ": '" + a.type_name() + "' and '" + b.type_name() + "'");
}

bool is_integral(const Value& v) { return v.is_int() || v.is_bool(); }
std::int64_t int_of(const Value& v) { return v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int(); }

[[noreturn]] void overflow() { fail("integer overflow in template arithmetic"); }

Value repeat(const Value& seq, std::int64_t times, const RenderLimits& limits) {
    if (times < 0) times = 0;
    if (seq.is_string()) {
        const std::string& s = seq.as_string();
        if (!s.empty() && static_cast<std::uint64_t>(times) > limits.max_output_bytes / s.size())
            check_size(limits, limits.max_output_bytes + 1);
        std::string out;
        out.reserve(s.size() * static_cast<std::size_t>(times));
        for (std::int64_t i = 0; i < times; ++i) out += s;
        return Value(std::move(out));
    }
    const auto& items = seq.as_list()->items;
    if (!items.empty() && times > limits.max_range / static_cast<std::int64_t>(items.size()))
        fail("list repetition longer than the template limit (" + std::to_string(limits.max_range) + " items)");
    std::vector<Value> out;
    for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
    return make_list(std::move(out), seq.as_list()->is_tuple);
}

}  // namespace

Value unary_op(std::string_view op, const Value& a) {
    require_defined(a);
    if (!a.is_number()) fail("bad operand type for unary " + std::string(op) + ": '" + a.type_name() + "'");
    if (op == "+") return a.is_bool() ? Value(int_of(a)) : a;
    if (a.is_float()) return Value(-a.as_float());
    std::int64_t x = int_of(a);
    if (x == INT64_MIN) overflow();
    return Value(-x);
}

Value binary_op(std::string_view op, const Value& a, const Value& b, const RenderLimits& limits) {
    if (op == "~") {
        std::string s = a.str() + b.str();
        check_size(limits, s.size());
        return Value(std::move(s));
    }
    if (op == "==") return Value(equals(a, b));
    if (op == "!=") return Value(!equals(a, b));
    if (op == "<" || op == "<=" || op == ">" || op == ">=") return Value(compare(a, b, op));
    if (op == "in") return Value(contains(b, a));
    if (op == "not in") return Value(!contains(b, a));

    bool numeric = a.is_number() && b.is_number();
    bool ints = numeric && is_integral(a) && is_integral(b);
    if (op == "+") {
        if (ints) {
            std::int64_t r;
            if (__builtin_add_overflow(int_of(a), int_of(b), &r)) overflow();
            return Value(r);
        }
        if (numeric) return Value(a.to_double() + b.to_double());
        if (a.is_string() && b.is_string()) {
            check_size(limits, a.as_string().size() + b.as_string().size());
            return Value(a.as_string() + b.as_string());
        }
        if (a.is_list() && b.is_list() && a.as_list()->is_tuple == b.as_list()->is_tuple) {
            std::vector<Value> items = a.as_list()->items;
            items.insert(items.end(), b.as_list()->items.begin(), b.as_list()->items.end());
            return make_list(std::move(items), a.as_list()->is_tuple);
        }
        unsupported(op, a, b);
    }
    if (op == "-") {
        if (ints) {
            std::int64_t r;
            if (__builtin_sub_overflow(int_of(a), int_of(b), &r)) overflow();
            return Value(r);
        }
        if (numeric) return Value(a.to_double() - b.to_double());
        unsupported(op, a, b);
    }
    if (op == "*") {
        if (ints) {
            std::int64_t r;
            if (__builtin_mul_overflow(int_of(a), int_of(b), &r)) overflow();
            return Value(r);
        }
        if (numeric) return Value(a.to_double() * b.to_double());
        if ((a.is_string() || a.is_list()) && is_integral(b)) return repeat(a, int_of(b), limits);
        if ((b.is_string() || b.is_list()) && is_integral(a)) return repeat(b, int_of(a), limits);
        unsupported(op, a, b);
    }
    if (op == "/") {
        if (!numeric) unsupported(op, a, b);
        if (b.to_double() == 0.0) fail("division by zero");
        return Value(a.to_double() / b.to_double());
    }
    if (op == "//") {
        if (!numeric) unsupported(op, a, b);
        if (ints) {
            std::int64_t x = int_of(a), y = int_of(b);
            if (y == 0) fail("integer division or modulo by zero");
            if (x == INT64_MIN && y == -1) overflow();
            std::int64_t q = x / y;
            if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
            return Value(q);
        }
        if (b.to_double() == 0.0) fail("float floor division by zero");
        return Value(std::floor(a.to_double() / b.to_double()));
    }
    if (op == "%") {
        if (a.is_string()) {
            std::vector<Value> args = b.is_list() && b.as_list()->is_tuple ? b.as_list()->items : std::vector<Value>{b};
            std::string s = py_percent_format(a.as_string(), args);
            check_size(limits, s.size());
            return Value(std::move(s));
        }
        if (!numeric) unsupported(op, a, b);
        if (ints) {
            std::int64_t x = int_of(a), y = int_of(b);
            if (y == 0) fail("integer division or modulo by zero");
            if (y == -1) return Value(std::int64_t{0});
            std::int64_t r = x % y;
            if (r != 0 && ((r < 0) != (y < 0))) r += y;
            return Value(r);
        }
        double x = a.to_double(), y = b.to_double();
        if (y == 0.0) fail("float modulo");
        double r = std::fmod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value(r);
    }
    if (op == "**") {
        if (!numeric) unsupported(op, a, b);
        if (ints && int_of(b) >= 0) {
            std::int64_t base = int_of(a), e = int_of(b), r = 1;
            while (e > 0) {
                if (e & 1) {
                    if (__builtin_mul_overflow(r, base, &r)) overflow();
                }
                e >>= 1;
                if (e > 0 && __builtin_mul_overflow(base, base, &base)) overflow();
            }
            return Value(r);
        }
        if (a.to_double() == 0.0 && b.to_double() < 0) fail("0.0 cannot be raised to a negative power");
        return Value(std::pow(a.to_double(), b.to_double()));
    }
    fail("unknown operator '" + std::string(op) + "'");
}

}  // namespace ember::jinja

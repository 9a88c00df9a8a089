#include "chat/jinja_value.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "runtime/fail.hpp"

namespace ember::jinja {

const Value* Dict::find(std::string_view key) const {
    for (const auto& [k, v] : items)
        if (k == key) return &v;
    return nullptr;
}

namespace {

// Adds a child's deep weight to a container's.
void add_child(Weight& w, const Weight& child) {
    w.items += child.items;
    w.bytes += child.bytes;
    w.depth = std::max(w.depth, child.depth + 1);
    w.has_namespace = w.has_namespace || child.has_namespace;
}

Weight items_weight(const std::vector<std::pair<std::string, Value>>& items) {
    Weight w;
    w.depth = 1;
    w.items = items.size();
    for (const auto& [k, v] : items) {
        w.bytes += k.size();
        add_child(w, v.weight());
    }
    return w;
}

}  // namespace

void Dict::set(const std::string& key, Value value) {
    const Weight vw = value.weight();
    if (kind == Kind::namespace_object && vw.has_namespace)
        fail("a namespace attribute cannot hold a namespace or loop object (the sandbox forbids reference cycles)");
    bool replaced = false;
    for (auto& [k, v] : items) {
        if (k == key) {
            v = std::move(value);
            replaced = true;
            break;
        }
    }
    if (replaced) {
        weight = items_weight(items);
    } else {
        items.emplace_back(key, std::move(value));
        weight.depth = std::max(weight.depth, 1);
        weight.items += 1;
        weight.bytes += key.size();
        add_child(weight, vw);
    }
    sandbox_new_container(weight, 1);
}

std::shared_ptr<const std::string> Value::new_string(std::string s) {
    sandbox_new_string(s.size());
    return std::make_shared<const std::string>(std::move(s));
}

Weight Value::weight() const {
    switch (kind()) {
        case Kind::string: return Weight{0, as_string().size(), 0, false};
        case Kind::list: return as_list()->weight;
        case Kind::dict:
            // A namespace or loop object is opaque: it is one item of its container.
            if (as_dict()->kind != Dict::Kind::plain) return Weight{0, 0, 1, true};
            return as_dict()->weight;
        default: return Weight{};
    }
}

Value make_list(std::vector<Value> items, bool is_tuple) {
    auto l = std::make_shared<List>();
    l->weight.depth = 1;
    l->weight.items = items.size();
    for (const auto& v : items) add_child(l->weight, v.weight());
    sandbox_new_container(l->weight, items.size());
    l->items = std::move(items);
    l->is_tuple = is_tuple;
    return Value(std::move(l));
}

Value make_dict(std::vector<std::pair<std::string, Value>> items) {
    auto d = std::make_shared<Dict>();
    d->weight = items_weight(items);
    sandbox_new_container(d->weight, items.size());
    d->items = std::move(items);
    return Value(std::move(d));
}

Value make_callable(std::string name, std::function<Value(CallArgs&)> fn) {
    auto c = std::make_shared<Callable>();
    c->name = std::move(name);
    c->fn = std::move(fn);
    return Value(std::move(c));
}

double Value::to_double() const {
    if (is_bool()) return as_bool() ? 1.0 : 0.0;
    if (is_int()) return static_cast<double>(as_int());
    return as_float();
}

bool Value::truthy() const {
    switch (kind()) {
        case Kind::undefined:
        case Kind::none: return false;
        case Kind::boolean: return as_bool();
        case Kind::integer: return as_int() != 0;
        case Kind::floating: return as_float() != 0.0;
        case Kind::string: return !as_string().empty();
        case Kind::list: return !as_list()->items.empty();
        case Kind::dict: return as_dict()->kind != Dict::Kind::plain || !as_dict()->items.empty();
        case Kind::callable: return true;
    }
    return false;
}

namespace {

std::string repr_string(const std::string& s) {
    bool has_single = s.find('\'') != std::string::npos;
    bool has_double = s.find('"') != std::string::npos;
    char quote = (has_single && !has_double) ? '"' : '\'';
    std::string out(1, quote);
    for (char ch : s) {
        auto c = static_cast<unsigned char>(ch);
        if (ch == quote || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (ch == '\n') {
            out += "\\n";
        } else if (ch == '\r') {
            out += "\\r";
        } else if (ch == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\x%02x", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    out += quote;
    return out;
}

}  // namespace

std::string Value::str() const {
    switch (kind()) {
        case Kind::undefined: return "";
        case Kind::none: return "None";
        case Kind::boolean: return as_bool() ? "True" : "False";
        case Kind::integer: return std::to_string(as_int());
        case Kind::floating: return json::python_float_repr(as_float());
        case Kind::string: return as_string();
        default: return repr();
    }
}

namespace {

// repr() into `out`, failing once `out` passes `limit` bytes: a list may hold one namespace many
// times, and a namespace's attributes may change after the list was made, so the list's weight
// alone does not bound its text.
void repr_into(const Value& v, std::string& out, std::size_t limit) {
    switch (v.kind()) {
        case Value::Kind::list: {
            const auto& l = *v.as_list();
            out += l.is_tuple ? "(" : "[";
            for (std::size_t i = 0; i < l.items.size(); ++i) {
                if (i) out += ", ";
                repr_into(l.items[i], out, limit);
            }
            if (l.is_tuple && l.items.size() == 1) out += ",";
            out += l.is_tuple ? ")" : "]";
            break;
        }
        case Value::Kind::dict: {
            const auto& d = *v.as_dict();
            if (d.kind == Dict::Kind::loop) {
                out += "<LoopContext>";
                break;
            }
            out += d.kind == Dict::Kind::namespace_object ? "<Namespace {" : "{";
            for (std::size_t i = 0; i < d.items.size(); ++i) {
                if (i) out += ", ";
                out += repr_string(d.items[i].first);
                out += ": ";
                repr_into(d.items[i].second, out, limit);
            }
            out += d.kind == Dict::Kind::namespace_object ? "}>" : "}";
            break;
        }
        case Value::Kind::undefined: out += "Undefined"; break;
        case Value::Kind::string: out += repr_string(v.as_string()); break;
        case Value::Kind::callable: out += "<function " + v.as_callable()->name + ">"; break;
        default: out += v.str(); break;
    }
    if (out.size() > limit)
        fail("printed value longer than the template limit (" + std::to_string(limit) + " bytes)");
}

}  // namespace

std::string Value::repr() const {
    const RenderLimits* limits = active_limits();
    std::string out;
    repr_into(*this, out, limits ? limits->max_output_bytes : static_cast<std::size_t>(-1));
    return out;
}

std::string Value::type_name() const {
    switch (kind()) {
        case Kind::undefined: return "Undefined";
        case Kind::none: return "NoneType";
        case Kind::boolean: return "bool";
        case Kind::integer: return "int";
        case Kind::floating: return "float";
        case Kind::string: return "str";
        case Kind::list: return as_list()->is_tuple ? "tuple" : "list";
        case Kind::dict:
            switch (as_dict()->kind) {
                case Dict::Kind::plain: return "dict";
                case Dict::Kind::namespace_object: return "Namespace";
                case Dict::Kind::loop: return "LoopContext";
            }
            return "dict";
        case Kind::callable: return "function";
    }
    return "object";
}

bool equals(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (!a.is_float() && !b.is_float()) {
            std::int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
            std::int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
            return x == y;
        }
        return a.to_double() == b.to_double();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Value::Kind::undefined:
        case Value::Kind::none: return true;
        case Value::Kind::string: return a.as_string() == b.as_string();
        case Value::Kind::list: {
            const auto& x = a.as_list()->items;
            const auto& y = b.as_list()->items;
            if (x.size() != y.size() || a.as_list()->is_tuple != b.as_list()->is_tuple) return false;
            for (std::size_t i = 0; i < x.size(); ++i)
                if (!equals(x[i], y[i])) return false;
            return true;
        }
        case Value::Kind::dict: {
            const auto& x = *a.as_dict();
            const auto& y = *b.as_dict();
            if (x.kind != Dict::Kind::plain || y.kind != Dict::Kind::plain) return &x == &y;
            if (x.items.size() != y.items.size()) return false;
            for (const auto& [k, v] : x.items) {
                const Value* other = y.find(k);
                if (!other || !equals(v, *other)) return false;
            }
            return true;
        }
        case Value::Kind::callable: return a.as_callable() == b.as_callable();
        default: return false;
    }
}

namespace {

// -1, 0, 1; throws for unorderable pairs.
int order(const Value& a, const Value& b, std::string_view op) {
    if (a.is_number() && b.is_number()) {
        if (!a.is_float() && !b.is_float()) {
            std::int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
            std::int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
            return x < y ? -1 : (x > y ? 1 : 0);
        }
        double x = a.to_double(), y = b.to_double();
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.is_string() && b.is_string()) {
        int c = a.as_string().compare(b.as_string());  // UTF-8 byte order is code point order
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.is_list() && b.is_list() && a.as_list()->is_tuple == b.as_list()->is_tuple) {
        const auto& x = a.as_list()->items;
        const auto& y = b.as_list()->items;
        for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (equals(x[i], y[i])) continue;
            return order(x[i], y[i], op);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    if (a.is_undefined()) fail(a.undefined_message());
    if (b.is_undefined()) fail(b.undefined_message());
    std::string message(1, '\'');
    message.append(op).append("' not supported between instances of '").append(a.type_name());
    message.append("' and '").append(b.type_name()).append("'");
    fail(message);
}

}  // namespace

bool compare(const Value& a, const Value& b, std::string_view op) {
    int c = order(a, b, op);
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    return c >= 0;
}

Value from_json(const json::Value& v) {
    using T = json::Value::value_t;
    switch (v.type()) {
        case T::null: return Value::none();
        case T::boolean: return Value(v.get<bool>());
        case T::number_integer: return Value(v.get<std::int64_t>());
        case T::number_unsigned: {  // past int64 a float, as Jinja integers are 64-bit here
            const auto u = v.get<std::uint64_t>();
            if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return Value(static_cast<std::int64_t>(u));
            return Value(static_cast<double>(u));
        }
        case T::number_float: return Value(v.get<double>());
        case T::string: return Value(v.get<std::string>());
        case T::array: {
            std::vector<Value> items;
            items.reserve(v.size());
            for (const auto& e : v) items.push_back(from_json(e));
            return make_list(std::move(items));
        }
        case T::object: {
            std::vector<std::pair<std::string, Value>> items;
            items.reserve(v.size());
            for (const auto& item : v.items()) items.emplace_back(item.key(), from_json(item.value()));
            return make_dict(std::move(items));
        }
        case T::binary:
        case T::discarded: break;
    }
    return Value::none();
}

json::Value to_json(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::none: return json::Value();
        case Value::Kind::boolean: return json::Value(v.as_bool());
        case Value::Kind::integer: return json::Value(v.as_int());
        case Value::Kind::floating: return json::Value(v.as_float());
        case Value::Kind::string: return json::Value(v.as_string());
        case Value::Kind::list: {
            json::Value arr = json::Value::array();
            for (const auto& e : v.as_list()->items) arr.push_back(to_json(e));
            return arr;
        }
        case Value::Kind::dict: {
            if (v.as_dict()->kind == Dict::Kind::plain) {
                json::Value obj = json::Value::object();
                for (const auto& [k, e] : v.as_dict()->items) obj[k] = to_json(e);
                return obj;
            }
            break;
        }
        default: break;
    }
    fail("Object of type " + v.type_name() + " is not JSON serializable");
}

std::vector<std::size_t> codepoint_offsets(std::string_view s) {
    std::vector<std::size_t> offsets;
    offsets.reserve(s.size() + 1);
    for (std::size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) offsets.push_back(i);
    offsets.push_back(s.size());
    return offsets;
}

std::size_t codepoint_count(std::string_view s) {
    std::size_t n = 0;
    for (char c : s)
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
}

}  // namespace ember::jinja

// Runtime values of the Jinja interpreter, with Python semantics where templates observe them
// (truthiness, str(), repr(), ==, ordering, int/float arithmetic).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "chat/jinja_sandbox.hpp"
#include "chat/json.hpp"

namespace ember::jinja {

class Value;
struct List;
struct Dict;
struct Callable;

/// Jinja's Undefined: renders as "", is falsy, iterates as empty; most other uses raise
/// `message` ("'x' is undefined", "'dict object' has no attribute 'y'").
struct Undefined {
    std::string message;
};

/// Positional and keyword arguments of a call.
struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;
};

class Value {
public:
    enum class Kind { undefined, none, boolean, integer, floating, string, list, dict, callable };

    Value() : v_(Undefined{}) {}
    static Value undefined(std::string message) { return Value(Undefined{std::move(message)}); }
    static Value none() { return Value(nullptr); }
    Value(std::nullptr_t) : v_(nullptr) {}
    Value(bool b) : v_(b) {}
    Value(int i) : v_(static_cast<std::int64_t>(i)) {}
    Value(std::int64_t i) : v_(i) {}
    Value(double d) : v_(d) {}
    /// Strings are immutable and shared: copying a Value never copies its text. A new string
    /// is accounted against the active render's limits (jinja_sandbox.hpp).
    Value(std::string s) : v_(new_string(std::move(s))) {}
    Value(const char* s) : Value(std::string(s)) {}
    Value(std::shared_ptr<List> l) : v_(std::move(l)) {}
    Value(std::shared_ptr<Dict> d) : v_(std::move(d)) {}
    Value(std::shared_ptr<Callable> c) : v_(std::move(c)) {}

    Kind kind() const noexcept { return static_cast<Kind>(v_.index()); }
    bool is_undefined() const noexcept { return kind() == Kind::undefined; }
    bool is_none() const noexcept { return kind() == Kind::none; }
    bool is_bool() const noexcept { return kind() == Kind::boolean; }
    bool is_int() const noexcept { return kind() == Kind::integer; }
    bool is_float() const noexcept { return kind() == Kind::floating; }
    bool is_number() const noexcept { return is_int() || is_float() || is_bool(); }
    bool is_string() const noexcept { return kind() == Kind::string; }
    bool is_list() const noexcept { return kind() == Kind::list; }
    bool is_dict() const noexcept { return kind() == Kind::dict; }
    bool is_callable() const noexcept { return kind() == Kind::callable; }

    const std::string& undefined_message() const { return std::get<Undefined>(v_).message; }
    bool as_bool() const { return std::get<bool>(v_); }
    std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
    double as_float() const { return std::get<double>(v_); }
    const std::string& as_string() const { return *std::get<std::shared_ptr<const std::string>>(v_); }
    const std::shared_ptr<List>& as_list() const { return std::get<std::shared_ptr<List>>(v_); }
    const std::shared_ptr<Dict>& as_dict() const { return std::get<std::shared_ptr<Dict>>(v_); }
    const std::shared_ptr<Callable>& as_callable() const {
        return std::get<std::shared_ptr<Callable>>(v_);
    }

    /// Numeric value of a bool, int or float.
    double to_double() const;

    /// Python truthiness.
    bool truthy() const;
    /// Python str() as Jinja prints it ("" for undefined, "None", "True", "1.0", "['a', 1]").
    std::string str() const;
    /// Python repr().
    std::string repr() const;
    /// The Python type name for messages ("str", "int", "dict", "NoneType", ...).
    std::string type_name() const;
    /// Deep size: a namespace or loop object counts as one opaque item.
    Weight weight() const;

private:
    explicit Value(Undefined u) : v_(std::move(u)) {}
    static std::shared_ptr<const std::string> new_string(std::string s);
    std::variant<Undefined, std::nullptr_t, bool, std::int64_t, double, std::shared_ptr<const std::string>,
                 std::shared_ptr<List>, std::shared_ptr<Dict>, std::shared_ptr<Callable>>
        v_;
};

/// Lists are immutable once made (make_list); templates cannot call mutating methods.
struct List {
    std::vector<Value> items;
    bool is_tuple = false;
    Weight weight;  ///< of the whole list, set by make_list
};

/// A dict with string keys in insertion order. Also the type of namespace() and loop objects.
/// Plain dicts are built by make_dict or set(); namespaces change through set() only.
struct Dict {
    enum class Kind { plain, namespace_object, loop };
    std::vector<std::pair<std::string, Value>> items;
    Kind kind = Kind::plain;
    Weight weight;  ///< of the items, kept by set() and make_dict

    const Value* find(std::string_view key) const;
    /// Adds or replaces `key`, checked against the active render's limits; a namespace refuses
    /// a value that holds a namespace or loop object (no reference cycles).
    void set(const std::string& key, Value value);
};

struct Callable {
    std::string name;
    std::function<Value(CallArgs&)> fn;
};

Value make_list(std::vector<Value> items, bool is_tuple = false);
Value make_dict(std::vector<std::pair<std::string, Value>> items = {});
Value make_callable(std::string name, std::function<Value(CallArgs&)> fn);

/// Python ==.
bool equals(const Value& a, const Value& b);
/// Python <, <=, >, >= (op is "<", "<=", ">", ">="); throws for unorderable types.
bool compare(const Value& a, const Value& b, std::string_view op);

/// JSON input to a template value (objects become dicts, arrays lists).
Value from_json(const json::Value& v);
/// Template value to JSON for tojson; throws for undefined and callables.
json::Value to_json(const Value& v);

// ---- UTF-8 helpers: Python strings index by code point -------------------------------------

/// Byte offsets of every code point start, plus the string size at the end.
std::vector<std::size_t> codepoint_offsets(std::string_view s);
std::size_t codepoint_count(std::string_view s);

}  // namespace ember::jinja

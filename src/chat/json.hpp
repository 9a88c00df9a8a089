// A small JSON value with insertion-ordered objects, a strict parser, and a serializer that
// writes exactly what Python's json.dumps(ensure_ascii=False) writes (the chat-template tojson).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace ember::json {

class Value {
public:
    enum class Type { null, boolean, integer, number, string, array, object };
    using Array = std::vector<Value>;
    using Object = std::vector<std::pair<std::string, Value>>;  ///< Keeps insertion order.

    Value() = default;
    Value(std::nullptr_t) {}
    Value(bool b) : v_(b) {}
    Value(int i) : v_(static_cast<std::int64_t>(i)) {}
    Value(std::int64_t i) : v_(i) {}
    Value(double d) : v_(d) {}
    Value(std::string s) : v_(std::move(s)) {}
    Value(std::string_view s) : v_(std::string(s)) {}
    Value(const char* s) : v_(std::string(s)) {}
    Value(Array a) : v_(std::move(a)) {}
    Value(Object o) : v_(std::move(o)) {}

    static Value array() { return Value(Array{}); }
    static Value object() { return Value(Object{}); }

    Type type() const noexcept { return static_cast<Type>(v_.index()); }
    bool is_null() const noexcept { return type() == Type::null; }
    bool is_bool() const noexcept { return type() == Type::boolean; }
    bool is_int() const noexcept { return type() == Type::integer; }
    bool is_number() const noexcept { return type() == Type::number; }
    bool is_string() const noexcept { return type() == Type::string; }
    bool is_array() const noexcept { return type() == Type::array; }
    bool is_object() const noexcept { return type() == Type::object; }

    // Accessors throw ember::Error naming the expected and actual type on a mismatch.
    bool as_bool() const;
    std::int64_t as_int() const;
    double as_double() const;  ///< Integers convert.
    const std::string& as_string() const;
    const Array& as_array() const;
    Array& as_array();
    const Object& as_object() const;
    Object& as_object();

    /// Object member or nullptr (also nullptr when this is not an object).
    const Value* find(std::string_view key) const;
    /// Sets (replacing) an object member; turns a null into an object.
    void set(std::string key, Value value);
    /// Appends to an array; turns a null into an array.
    void push_back(Value value);

    friend bool operator==(const Value& a, const Value& b);

private:
    std::variant<std::monostate, bool, std::int64_t, double, std::string, Array, Object> v_;
};

const char* type_name(Value::Type type) noexcept;

/// Parses RFC 8259 JSON (UTF-8). Throws ember::Error "JSON: line L, column C: ..." on bad input.
/// Integers that fit in int64 stay integers; other numbers become doubles.
Value parse(std::string_view text);

/// Python json.dumps(value, ensure_ascii=False): separators ", " and ": " without indent,
/// "," and ": " with indent >= 0 (newline + indent spaces per level). Floats use Python's repr.
std::string dump(const Value& value, int indent = -1);

/// Appends a JSON string literal (quotes included) as json.dumps(ensure_ascii=False) writes it.
void append_quoted(std::string& out, std::string_view text);

/// Python's repr() of a float ("1.0", "0.1", "1e+16", "1e-05", "inf", "nan").
std::string python_float_repr(double value);

}  // namespace ember::json

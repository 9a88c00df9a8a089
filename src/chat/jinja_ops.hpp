// Python semantics of the operations templates perform on values: attribute and item access
// (with bound methods), slicing, iteration, arithmetic and membership.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja_value.hpp"

namespace ember::jinja {

/// Throws when a string or list would exceed the limits.
void check_size(const RenderLimits& limits, std::size_t bytes_or_items);

/// obj.name: a dict key, a loop/namespace attribute, or a bound method of str/dict/list.
/// Missing names give Undefined; an Undefined obj raises its message.
Value get_attribute(const Value& obj, const std::string& name, const RenderLimits& limits);
/// obj[key]: list/str index, dict key, or (for string keys) an attribute.
Value get_item(const Value& obj, const Value& key, const RenderLimits& limits);
/// obj[start:stop:step] for lists, tuples and strings (null Values mean omitted).
Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

/// Items of an iterable: list items, dict keys, string characters, nothing for Undefined.
std::vector<Value> iterate(const Value& v);
/// len(): code points of a string, items of a list/dict; 0 for Undefined.
std::int64_t length(const Value& v);

/// Binary operators: + - * / // % ** ~ == != < <= > >= in "not in".
Value binary_op(std::string_view op, const Value& a, const Value& b, const RenderLimits& limits);
/// Unary - and +.
Value unary_op(std::string_view op, const Value& a);
/// Python `needle in container`.
bool contains(const Value& container, const Value& needle);

/// Raises the Undefined's message when v is Undefined (for operations that need a value).
void require_defined(const Value& v);

/// The Python-style type name in messages such as "'dict object' has no attribute 'x'".
std::string object_type_repr(const Value& v);

/// Reads call arguments by position or keyword.
class ArgReader {
public:
    ArgReader(const CallArgs& args, std::string function) : args_(args), function_(std::move(function)) {}
    /// Positional argument `index` or keyword `name`; nullptr when absent.
    const Value* find(std::size_t index, std::string_view name) const;
    Value get(std::size_t index, std::string_view name, Value fallback = Value()) const;
    std::int64_t get_int(std::size_t index, std::string_view name, std::int64_t fallback) const;
    bool get_bool(std::size_t index, std::string_view name, bool fallback) const;
    /// A string argument; absent or None gives nullopt.
    std::optional<std::string> get_string(std::size_t index, std::string_view name) const;
    /// Throws when more than n positional arguments were given.
    void max_positional(std::size_t n) const;
    const std::string& function() const { return function_; }

private:
    const CallArgs& args_;
    std::string function_;
};

/// Bound method `name` of a str, dict or list value, or Undefined when there is none.
Value get_method(const Value& obj, const std::string& name, const RenderLimits& limits);

}  // namespace ember::jinja

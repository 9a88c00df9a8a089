// Model's typed access to any GGUF metadata key.
#include <string>

#include "api/model_impl.hpp"
#include "runtime/fail.hpp"

namespace ember {
namespace {

const gguf::Value* find(const detail::ModelImpl& m, std::string_view key) { return m.file.find(key); }

[[noreturn]] void wrong_type(const detail::ModelImpl& m, std::string_view key, gguf::ValueType actual,
                             const char* wanted) {
    fail(m.file.name() + ": metadata key '" + std::string(key) + "' holds " +
         std::string(gguf::value_type_name(actual)) + ", not " + wanted);
}

bool is_integer_type(gguf::ValueType t) noexcept {
    using T = gguf::ValueType;
    return t == T::u8 || t == T::i8 || t == T::u16 || t == T::i16 || t == T::u32 || t == T::i32 ||
           t == T::u64 || t == T::i64;
}

bool is_float_type(gguf::ValueType t) noexcept { return t == gguf::ValueType::f32 || t == gguf::ValueType::f64; }

double to_double(const gguf::Value& v, std::string_view key) {
    if (const auto* d = std::get_if<double>(&v.data)) return *d;
    if (const auto* u = std::get_if<std::uint64_t>(&v.data)) return static_cast<double>(*u);
    return static_cast<double>(v.as_i64(key));
}

// The elements of an array key, each checked by `accept` and converted by `convert`.
template <class T, class Convert>
std::optional<std::vector<T>> array_of(const detail::ModelImpl& m, std::string_view key, bool (*accept)(gguf::ValueType),
                                       const char* wanted, Convert convert) {
    const gguf::Value* v = find(m, key);
    if (v == nullptr) return std::nullopt;
    if (v->type != gguf::ValueType::array) wrong_type(m, key, v->type, wanted);
    const gguf::Array& a = v->as_array(key);
    if (!accept(a.element_type)) {
        fail(m.file.name() + ": metadata key '" + std::string(key) + "' holds an array of " +
             std::string(gguf::value_type_name(a.element_type)) + ", not " + wanted);
    }
    std::vector<T> out;
    out.reserve(a.items.size());
    for (const gguf::Value& item : a.items) out.push_back(convert(item));
    return out;
}

}  // namespace

std::vector<std::string> Model::metadata_keys() const {
    std::vector<std::string> keys;
    keys.reserve(impl_->file.metadata().size());
    for (const auto& kv : impl_->file.metadata()) keys.emplace_back(kv.key);
    return keys;
}

MetadataType Model::metadata_type(std::string_view key) const noexcept {
    const gguf::Value* v = find(*impl_, key);
    if (v == nullptr) return MetadataType::absent;
    if (is_integer_type(v->type)) return MetadataType::integer;
    if (is_float_type(v->type)) return MetadataType::floating;
    switch (v->type) {
        case gguf::ValueType::boolean: return MetadataType::boolean;
        case gguf::ValueType::string: return MetadataType::string;
        default: return MetadataType::array;
    }
}

std::optional<std::int64_t> Model::metadata_int(std::string_view key) const {
    const gguf::Value* v = find(*impl_, key);
    if (v == nullptr) return std::nullopt;
    if (!is_integer_type(v->type)) wrong_type(*impl_, key, v->type, "an integer");
    return v->as_i64(key);
}

std::optional<double> Model::metadata_float(std::string_view key) const {
    const gguf::Value* v = find(*impl_, key);
    if (v == nullptr) return std::nullopt;
    if (!is_integer_type(v->type) && !is_float_type(v->type)) wrong_type(*impl_, key, v->type, "a number");
    return to_double(*v, key);
}

std::optional<bool> Model::metadata_bool(std::string_view key) const {
    const gguf::Value* v = find(*impl_, key);
    if (v == nullptr) return std::nullopt;
    if (v->type != gguf::ValueType::boolean) wrong_type(*impl_, key, v->type, "a bool");
    return v->as_bool(key);
}

std::optional<std::string> Model::metadata_string(std::string_view key) const {
    const gguf::Value* v = find(*impl_, key);
    if (v == nullptr) return std::nullopt;
    if (v->type != gguf::ValueType::string) wrong_type(*impl_, key, v->type, "a string");
    return std::string(v->as_string(key));
}

std::optional<std::vector<std::int64_t>> Model::metadata_int_array(std::string_view key) const {
    return array_of<std::int64_t>(*impl_, key, is_integer_type, "an array of integers",
                                  [&](const gguf::Value& item) { return item.as_i64(key); });
}

std::optional<std::vector<double>> Model::metadata_float_array(std::string_view key) const {
    return array_of<double>(
        *impl_, key, [](gguf::ValueType t) { return is_integer_type(t) || is_float_type(t); },
        "an array of numbers", [&](const gguf::Value& item) { return to_double(item, key); });
}

std::optional<std::vector<std::string>> Model::metadata_string_array(std::string_view key) const {
    return array_of<std::string>(
        *impl_, key, [](gguf::ValueType t) { return t == gguf::ValueType::string; }, "an array of strings",
        [&](const gguf::Value& item) { return std::string(item.as_string(key)); });
}

}  // namespace ember

#include "gguf/gguf_writer.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "runtime/fail.hpp"
#include "runtime/file_io.hpp"

namespace ember::gguf {
namespace {

template <class T>
void put(std::string& out, T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.append(b, sizeof(T));
}

void put_string(std::string& out, std::string_view s) {
    put<std::uint64_t>(out, s.size());
    out.append(s);
}

template <class T>
MetaValue scalar_array(ValueType elem, std::span<const T> items, MetaValue (*make)(T)) {
    std::vector<MetaValue> values;
    values.reserve(items.size());
    for (const T& v : items) values.push_back(make(v));
    return MetaValue::array(elem, values);
}

std::uint64_t align_up(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

// ---- MetaValue ------------------------------------------------------------------------------

#define EMBER_GGUF_SCALAR(fn, vt, T)              \
    MetaValue MetaValue::fn(T v) {                \
        std::string p;                            \
        put<T>(p, v);                             \
        return MetaValue(ValueType::vt, std::move(p)); \
    }
EMBER_GGUF_SCALAR(u8, u8, std::uint8_t)
EMBER_GGUF_SCALAR(i8, i8, std::int8_t)
EMBER_GGUF_SCALAR(u16, u16, std::uint16_t)
EMBER_GGUF_SCALAR(i16, i16, std::int16_t)
EMBER_GGUF_SCALAR(u32, u32, std::uint32_t)
EMBER_GGUF_SCALAR(i32, i32, std::int32_t)
EMBER_GGUF_SCALAR(u64, u64, std::uint64_t)
EMBER_GGUF_SCALAR(i64, i64, std::int64_t)
EMBER_GGUF_SCALAR(f32, f32, float)
EMBER_GGUF_SCALAR(f64, f64, double)
#undef EMBER_GGUF_SCALAR

MetaValue MetaValue::boolean(bool v) { return MetaValue(ValueType::boolean, std::string(1, v ? '\1' : '\0')); }

MetaValue MetaValue::string(std::string_view v) {
    std::string p;
    put_string(p, v);
    return MetaValue(ValueType::string, std::move(p));
}

MetaValue MetaValue::array(ValueType element_type, const std::vector<MetaValue>& items) {
    if (static_cast<std::uint32_t>(element_type) > 12) {
        fail("gguf writer: unknown array element type " + std::to_string(static_cast<std::uint32_t>(element_type)));
    }
    int depth = 1;
    std::size_t total = 12;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (items[i].type_ != element_type) {
            fail("gguf writer: array of " + std::string(value_type_name(element_type)) + ": item " +
                 std::to_string(i) + " is a " + std::string(value_type_name(items[i].type_)));
        }
        depth = std::max(depth, items[i].depth_ + 1);
        total += items[i].payload_.size();
    }
    if (depth > kMaxArrayDepth) {
        fail("gguf writer: arrays nested " + std::to_string(depth) + " deep (at most " +
             std::to_string(kMaxArrayDepth) + " levels load)");
    }
    std::string p;
    p.reserve(total);
    put<std::uint32_t>(p, static_cast<std::uint32_t>(element_type));
    put<std::uint64_t>(p, items.size());
    for (const MetaValue& v : items) p += v.payload_;
    return MetaValue(ValueType::array, std::move(p), depth);
}

MetaValue MetaValue::strings(const std::vector<std::string>& items) {
    std::size_t total = 12;
    for (const auto& s : items) total += 8 + s.size();
    std::string p;
    p.reserve(total);
    put<std::uint32_t>(p, static_cast<std::uint32_t>(ValueType::string));
    put<std::uint64_t>(p, items.size());
    for (const auto& s : items) put_string(p, s);
    return MetaValue(ValueType::array, std::move(p), 1);
}

MetaValue MetaValue::f32s(std::span<const float> items) {
    return scalar_array<float>(ValueType::f32, items, &MetaValue::f32);
}
MetaValue MetaValue::i32s(std::span<const std::int32_t> items) {
    return scalar_array<std::int32_t>(ValueType::i32, items, &MetaValue::i32);
}
MetaValue MetaValue::u32s(std::span<const std::uint32_t> items) {
    return scalar_array<std::uint32_t>(ValueType::u32, items, &MetaValue::u32);
}

MetaValue MetaValue::from(const Value& value) {
    const std::string_view key = "<value>";
    switch (value.type) {
        case ValueType::u8: return u8(static_cast<std::uint8_t>(value.as_u64(key)));
        case ValueType::u16: return u16(static_cast<std::uint16_t>(value.as_u64(key)));
        case ValueType::u32: return u32(static_cast<std::uint32_t>(value.as_u64(key)));
        case ValueType::u64: return u64(value.as_u64(key));
        case ValueType::i8: return i8(static_cast<std::int8_t>(value.as_i64(key)));
        case ValueType::i16: return i16(static_cast<std::int16_t>(value.as_i64(key)));
        case ValueType::i32: return i32(static_cast<std::int32_t>(value.as_i64(key)));
        case ValueType::i64: return i64(value.as_i64(key));
        case ValueType::f32: return f32(static_cast<float>(std::get<double>(value.data)));
        case ValueType::f64: return f64(std::get<double>(value.data));
        case ValueType::boolean: return boolean(value.as_bool(key));
        case ValueType::string: return string(value.as_string(key));
        case ValueType::array: {
            const Array& a = value.as_array(key);
            std::vector<MetaValue> items;
            items.reserve(a.items.size());
            for (const Value& v : a.items) items.push_back(from(v));
            return array(a.element_type, items);
        }
    }
    fail("gguf writer: unknown value type " + std::to_string(static_cast<std::uint32_t>(value.type)));
}

// ---- Writer ---------------------------------------------------------------------------------

void Writer::set(std::string_view key, MetaValue value) {
    if (key.empty()) fail("gguf writer: empty metadata key");
    for (Entry& e : kvs_) {
        if (e.key == key) {
            e.value = std::move(value);
            return;
        }
    }
    kvs_.push_back(Entry{std::string(key), std::move(value)});
}

void Writer::set_alignment(std::uint32_t alignment) {
    if (alignment == 0 || !std::has_single_bit(alignment)) {
        fail("gguf writer: key 'general.alignment': " + std::to_string(alignment) +
             " is not a non-zero power of two");
    }
    set_u32("general.alignment", alignment);
}

void Writer::set_version(std::uint32_t version) {
    if (version != 2 && version != 3) fail("gguf writer: cannot write GGUF version " + std::to_string(version));
    version_ = version;
}

void Writer::copy_metadata(const File& file) {
    for (const KeyValue& kv : file.metadata()) set(kv.key, MetaValue::from(kv.value));
}

bool Writer::remove(std::string_view key) {
    const auto it = std::find_if(kvs_.begin(), kvs_.end(), [&](const Entry& e) { return e.key == key; });
    if (it == kvs_.end()) return false;
    kvs_.erase(it);
    return true;
}

bool Writer::has(std::string_view key) const noexcept {
    return std::any_of(kvs_.begin(), kvs_.end(), [&](const Entry& e) { return e.key == key; });
}

void Writer::add_tensor(std::string_view name, TensorType type, const std::vector<std::int64_t>& dims,
                        std::vector<std::uint8_t> data) {
    add(name, type, dims, std::move(data), {});
}

void Writer::add_tensor_view(std::string_view name, TensorType type, const std::vector<std::int64_t>& dims,
                             std::span<const std::uint8_t> data) {
    add(name, type, dims, {}, data);
}

void Writer::add(std::string_view name, TensorType type, const std::vector<std::int64_t>& dims,
                 std::vector<std::uint8_t> owned, std::span<const std::uint8_t> data) {
    const std::string where = "gguf writer: tensor '" + std::string(name) + "': ";
    if (name.empty()) fail("gguf writer: empty tensor name");
    for (const Tensor& t : tensors_) {
        if (t.name == name) fail(where + "duplicate tensor name");
    }
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(type));
    if (!traits) fail(where + "unknown tensor type " + std::to_string(static_cast<std::uint32_t>(type)));
    if (dims.empty() || dims.size() > 4) fail(where + std::to_string(dims.size()) + " dims (1..4 allowed)");
    std::int64_t n = 1;
    for (std::int64_t d : dims) {
        if (d <= 0) fail(where + "dimension " + std::to_string(d) + " is not positive");
        if (__builtin_mul_overflow(n, d, &n)) fail(where + "element count overflows");
    }
    if (dims[0] % traits->block_size != 0) {
        fail(where + "ne[0] = " + std::to_string(dims[0]) + " is not a multiple of the " + std::string(traits->name) +
             " block size " + std::to_string(traits->block_size));
    }
    std::uint64_t n_bytes = 0;
    if (__builtin_mul_overflow(static_cast<std::uint64_t>(n / traits->block_size),
                               static_cast<std::uint64_t>(traits->block_bytes), &n_bytes)) {
        fail(where + "byte size overflows");
    }
    const std::size_t given = owned.empty() ? data.size() : owned.size();
    if (given != n_bytes) {
        fail(where + "data has " + std::to_string(given) + " bytes, the " + std::string(traits->name) +
             " tensor needs " + std::to_string(n_bytes));
    }
    tensors_.push_back(Tensor{std::string(name), type, dims, std::move(owned), data});
    Tensor& t = tensors_.back();
    if (!t.owned.empty()) t.data = std::span<const std::uint8_t>(t.owned.data(), t.owned.size());
}

std::uint64_t Writer::alignment() const {
    for (const Entry& e : kvs_) {
        if (e.key != "general.alignment") continue;
        if (e.value.type() != ValueType::u32) {
            fail("gguf writer: key 'general.alignment' must be a u32, not " +
                 std::string(value_type_name(e.value.type())));
        }
        std::uint32_t a = 0;
        std::memcpy(&a, e.value.payload().data(), 4);
        if (a == 0 || !std::has_single_bit(a)) {
            fail("gguf writer: key 'general.alignment': " + std::to_string(a) + " is not a non-zero power of two");
        }
        return a;
    }
    return kDefaultAlignment;
}

template <class Sink>
void Writer::write(Sink& sink) const {
    const std::uint64_t align = alignment();
    std::string h;
    put<std::uint32_t>(h, kMagic);
    put<std::uint32_t>(h, version_);
    put<std::uint64_t>(h, tensors_.size());
    put<std::uint64_t>(h, kvs_.size());
    for (const Entry& e : kvs_) {
        put_string(h, e.key);
        put<std::uint32_t>(h, static_cast<std::uint32_t>(e.value.type()));
        h += e.value.payload();
    }
    std::uint64_t offset = 0;
    std::vector<std::uint64_t> offsets;
    offsets.reserve(tensors_.size());
    for (const Tensor& t : tensors_) {
        put_string(h, t.name);
        put<std::uint32_t>(h, static_cast<std::uint32_t>(t.dims.size()));
        for (std::int64_t d : t.dims) put<std::uint64_t>(h, static_cast<std::uint64_t>(d));
        put<std::uint32_t>(h, static_cast<std::uint32_t>(t.type));
        put<std::uint64_t>(h, offset);
        offsets.push_back(offset);
        offset = align_up(offset + t.data.size(), align);
    }
    h.resize(align_up(h.size(), align), '\0');
    sink(h.data(), h.size());

    const std::string zeros(align, '\0');
    for (std::size_t i = 0; i < tensors_.size(); ++i) {
        const auto& d = tensors_[i].data;
        if (!d.empty()) sink(d.data(), d.size());
        const std::uint64_t pad = align_up(d.size(), align) - d.size();
        if (pad != 0) sink(zeros.data(), static_cast<std::size_t>(pad));
    }
}

std::vector<std::uint8_t> Writer::write_to_bytes() const {
    std::vector<std::uint8_t> out;
    auto sink = [&out](const void* p, std::size_t n) {
        const auto* b = static_cast<const std::uint8_t*>(p);
        out.insert(out.end(), b, b + n);
    };
    write(sink);
    return out;
}

void Writer::write_to_file(const std::string& path) const {
    OutputFile out(path);  // removed unless committed: a failed write leaves no file
    auto sink = [&out](const void* p, std::size_t n) { out.write(p, n); };
    write(sink);
    out.commit();
}

}  // namespace ember::gguf

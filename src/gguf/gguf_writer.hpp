// Builds GGUF files (version 3 by default, 2 on request) for the tools and the tests.
//
//   gguf::Writer w;
//   w.set_string("general.architecture", "llama");
//   w.set_u32("llama.block_count", 5);
//   w.set("tokenizer.ggml.tokens", gguf::MetaValue::strings(tokens));
//   w.add_tensor("output_norm.weight", TensorType::F32, {64}, bytes);   // dims: ne[0] first
//   w.write_to_file("model.gguf");
//
// Metadata keeps insertion order; setting an existing key replaces its value in place.
// Tensor data is laid out in the order added, each at an offset aligned to `general.alignment`
// (default 32), and the header is padded so the data section starts aligned. Everything the
// reader (gguf::File) would reject is rejected here too, with an ember::Error naming the key or
// tensor, so a file this class writes always loads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "gguf/tensor_type.hpp"

namespace ember::gguf {

/// An owned metadata value (gguf::Value borrows from a file; this one holds its bytes).
/// Construct through the named factories; arrays check that every item has the element type.
class MetaValue {
public:
    static MetaValue u8(std::uint8_t v);
    static MetaValue i8(std::int8_t v);
    static MetaValue u16(std::uint16_t v);
    static MetaValue i16(std::int16_t v);
    static MetaValue u32(std::uint32_t v);
    static MetaValue i32(std::int32_t v);
    static MetaValue u64(std::uint64_t v);
    static MetaValue i64(std::int64_t v);
    static MetaValue f32(float v);
    static MetaValue f64(double v);
    static MetaValue boolean(bool v);
    static MetaValue string(std::string_view v);
    /// An array of `element_type`; throws ember::Error when an item has another type or when
    /// arrays nest deeper than the reader accepts (4 levels). Nested arrays may differ in their
    /// own element types.
    static MetaValue array(ValueType element_type, const std::vector<MetaValue>& items);
    /// Typed array shortcuts.
    static MetaValue strings(const std::vector<std::string>& items);
    static MetaValue f32s(std::span<const float> items);
    static MetaValue i32s(std::span<const std::int32_t> items);
    static MetaValue u32s(std::span<const std::uint32_t> items);
    /// A deep copy of a value read from a file.
    static MetaValue from(const Value& value);

    ValueType type() const noexcept { return type_; }
    /// Encoded value (without the leading type tag), as it appears in the file.
    const std::string& payload() const noexcept { return payload_; }
    /// Array nesting depth: 0 for scalars and strings, 1 for a flat array.
    int depth() const noexcept { return depth_; }

private:
    MetaValue(ValueType type, std::string payload, int depth = 0)
        : type_(type), payload_(std::move(payload)), depth_(depth) {}
    ValueType type_;
    std::string payload_;
    int depth_ = 0;
};

class Writer {
public:
    Writer() = default;

    /// Sets `key` (appends, or replaces an existing key's value keeping its position).
    /// Throws ember::Error for an empty key.
    void set(std::string_view key, MetaValue value);
    void set_u32(std::string_view key, std::uint32_t v) { set(key, MetaValue::u32(v)); }
    void set_i32(std::string_view key, std::int32_t v) { set(key, MetaValue::i32(v)); }
    void set_u64(std::string_view key, std::uint64_t v) { set(key, MetaValue::u64(v)); }
    void set_f32(std::string_view key, float v) { set(key, MetaValue::f32(v)); }
    void set_bool(std::string_view key, bool v) { set(key, MetaValue::boolean(v)); }
    void set_string(std::string_view key, std::string_view v) { set(key, MetaValue::string(v)); }
    /// Sets `general.alignment` (u32); throws unless a non-zero power of two.
    void set_alignment(std::uint32_t alignment);
    /// GGUF version to write: 3 (default) or 2 (same layout). Throws for anything else.
    void set_version(std::uint32_t version);

    /// Copies every metadata entry of `file`, in file order (existing keys are replaced).
    void copy_metadata(const File& file);
    bool remove(std::string_view key);  ///< False when absent.
    bool has(std::string_view key) const noexcept;
    std::size_t n_metadata() const noexcept { return kvs_.size(); }

    /// Adds a tensor that the writer owns. `dims` lists ne[0] (the contiguous dimension) first,
    /// 1 to 4 of them, each > 0, ne[0] a multiple of the type's block size; `data` must hold
    /// exactly the tensor's byte size. Throws ember::Error naming the tensor otherwise, or
    /// when the name is empty or already used.
    void add_tensor(std::string_view name, TensorType type, const std::vector<std::int64_t>& dims,
                    std::vector<std::uint8_t> data);
    /// Same, borrowing `data` (it must stay valid until the last write_to_* call).
    void add_tensor_view(std::string_view name, TensorType type, const std::vector<std::int64_t>& dims,
                         std::span<const std::uint8_t> data);
    std::size_t n_tensors() const noexcept { return tensors_.size(); }

    /// The alignment that will be used (general.alignment when set, else 32).
    std::uint64_t alignment() const;

    /// Streams the file to `path` (through a temporary file in its folder, renamed at the end,
    /// so a failed write leaves no partial file; an existing `path` must be a regular file).
    /// Throws ember::Error naming the path on I/O errors.
    void write_to_file(const std::string& path) const;
    /// The whole file in memory.
    std::vector<std::uint8_t> write_to_bytes() const;

private:
    struct Entry {
        std::string key;
        MetaValue value;
    };
    struct Tensor {
        std::string name;
        TensorType type;
        std::vector<std::int64_t> dims;
        std::vector<std::uint8_t> owned;
        std::span<const std::uint8_t> data;
    };
    template <class Sink>
    void write(Sink& sink) const;
    void add(std::string_view name, TensorType type, const std::vector<std::int64_t>& dims,
             std::vector<std::uint8_t> owned, std::span<const std::uint8_t> data);

    std::uint32_t version_ = 3;
    std::vector<Entry> kvs_;
    std::vector<Tensor> tensors_;
};

}  // namespace ember::gguf

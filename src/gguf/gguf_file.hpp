// A validated, read-only view of a GGUF file (versions 2 and 3), memory-mapped or borrowed from
// memory. Everything is checked in the constructor; afterwards every accessor is safe.
//
// Layout (little-endian): magic "GGUF", u32 version, u64 n_tensors, u64 n_kv, n_kv metadata
// entries (string key, u32 value type, value), n_tensors tensor infos (string name, u32 n_dims,
// u64 ne[n_dims], u32 type, u64 offset), padding to `general.alignment` (default 32), data.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "gguf/tensor_type.hpp"

namespace ember::gguf {

/// Format facts the reader and the writer share.
inline constexpr std::uint32_t kMagic = 0x46554747;  // "GGUF" read as little-endian u32
inline constexpr std::uint64_t kDefaultAlignment = 32;
inline constexpr int kMaxArrayDepth = 4;  // arrays nested at most this deep (an array of arrays is 2)

/// GGUF metadata value types (the u32 stored before each value).
enum class ValueType : std::uint32_t {
    u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
    string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};
std::string_view value_type_name(ValueType t) noexcept;

struct Value;
/// An array value: element type and elements (nested arrays allowed).
struct Array {
    ValueType element_type = ValueType::u8;
    std::vector<Value> items;
};

/// One metadata value. Strings are views into the file's bytes (valid while the File lives).
struct Value {
    ValueType type = ValueType::u8;
    std::variant<std::uint64_t, std::int64_t, double, bool, std::string_view,
                 std::shared_ptr<const Array>> data;

    bool is_integer() const noexcept;
    bool is_float() const noexcept;
    /// Checked conversions: throw ember::Error (naming `key`) on a type mismatch or a value
    /// that does not fit.
    std::uint32_t as_u32(std::string_view key) const;
    std::uint64_t as_u64(std::string_view key) const;
    std::int64_t as_i64(std::string_view key) const;
    float as_f32(std::string_view key) const;      // any numeric type
    bool as_bool(std::string_view key) const;
    std::string_view as_string(std::string_view key) const;
    const Array& as_array(std::string_view key) const;
};

struct KeyValue {
    std::string_view key;
    Value value;
    std::uint64_t offset = 0;  ///< Byte offset of the entry in the file.
};

/// A tensor described by the file. `data` points into the mapped bytes.
struct TensorInfo {
    std::string_view name;
    TensorType type = TensorType::F32;
    std::uint32_t n_dims = 0;
    std::int64_t ne[4] = {1, 1, 1, 1};  ///< ne[0] is the contiguous (row) dimension.
    std::uint64_t offset = 0;      ///< Offset inside the data section.
    std::uint64_t info_offset = 0; ///< Byte offset of the tensor info in the file (for errors).
    std::int64_t n_elements = 0;
    std::uint64_t n_bytes = 0;
    const std::uint8_t* data = nullptr;

    /// A 2-D tensor of `n_rows` rows of `n_cols` values over `n_bytes` bytes at `data` (no file:
    /// offsets 0), as tests and benchmarks hand matrices to the kernels.
    static TensorInfo matrix(std::string_view name, TensorType type, std::int64_t n_cols, std::int64_t n_rows,
                             const std::uint8_t* data, std::uint64_t n_bytes) noexcept {
        TensorInfo t;
        t.name = name;
        t.type = type;
        t.n_dims = 2;
        t.ne[0] = n_cols;
        t.ne[1] = n_rows;
        t.n_elements = n_cols * n_rows;
        t.n_bytes = n_bytes;
        t.data = data;
        return t;
    }

    std::int64_t n_rows() const noexcept { return ne[1] * ne[2] * ne[3]; }
    std::uint64_t row_bytes() const noexcept { return n_rows() > 0 ? n_bytes / n_rows() : 0; }
};

class File {
public:
    /// Maps and validates a file; with `use_mmap` false its bytes are read into memory by
    /// read_into_memory() (see MappedFile). Throws ember::Error naming
    /// the path, key/tensor and offset.
    static File open(const std::string& path, bool use_mmap = true);
    /// Validates bytes owned by the caller (zero-copy: they must outlive the File).
    /// `name` is used in error messages.
    static File from_memory(const void* data, std::size_t size, std::string name = "<memory>");
    /// Like from_memory but takes a copy of the bytes.
    static File from_copy(const void* data, std::size_t size, std::string name = "<memory>");

    File(File&&) noexcept;
    File& operator=(File&&) noexcept;
    ~File();

    const std::string& name() const noexcept;  ///< The path, or the name given.
    std::uint32_t version() const noexcept;
    std::uint64_t alignment() const noexcept;
    std::uint64_t data_offset() const noexcept;  ///< Start of the data section.
    std::span<const std::uint8_t> bytes() const noexcept;

    const std::vector<KeyValue>& metadata() const noexcept;
    const Value* find(std::string_view key) const noexcept;  ///< nullptr when absent.
    /// Checked typed getters: throw ember::Error naming the file and key when absent or mistyped.
    std::uint32_t get_u32(std::string_view key) const;
    float get_f32(std::string_view key) const;
    std::string_view get_string(std::string_view key) const;
    const Array& get_array(std::string_view key) const;
    /// Same, with a default when the key is absent (still an error when mistyped).
    std::uint32_t get_u32_or(std::string_view key, std::uint32_t fallback) const;
    float get_f32_or(std::string_view key, float fallback) const;
    bool get_bool_or(std::string_view key, bool fallback) const;
    std::string_view get_string_or(std::string_view key, std::string_view fallback) const;

    /// Copies bytes [offset, offset + n) of a tensor's data to dst (n within the tensor): read
    /// from the file when it is mapped, which is faster than touching the mapped pages.
    void copy(const TensorInfo& tensor, std::size_t offset, std::size_t n, std::uint8_t* dst) const noexcept;
    /// Drops a tensor's whole pages from memory once its bytes were copied elsewhere (repacked
    /// weights). The bytes stay readable, read again from the file if touched; a file given
    /// by from_memory or from_copy keeps them resident.
    void release(const TensorInfo& tensor) const noexcept;
    /// Locks the file's bytes that were not released into RAM (see MappedFile::lock); nothing
    /// for a file given by from_memory or from_copy.
    void lock() const;
    /// Opened with `use_mmap` false: reads the bytes not released into the process's own memory
    /// (MappedFile::read_into_memory); nothing otherwise. Not while other threads read the file.
    void read_into_memory() const;

    const std::vector<TensorInfo>& tensors() const noexcept;
    const TensorInfo* find_tensor(std::string_view name) const noexcept;  ///< nullptr when absent.

private:
    struct Impl;
    explicit File(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember::gguf

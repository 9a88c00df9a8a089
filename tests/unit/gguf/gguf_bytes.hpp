// A byte-level GGUF builder for tests: writes exactly what it is told, valid or not.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace gguf_test {

struct Bytes {
    std::vector<std::uint8_t> b;

    // Appends with resize + memcpy (vector::insert trips a GCC 12 -Wstringop-overflow false positive).
    Bytes& append(const void* p, std::size_t n) {
        const std::size_t at = b.size();
        b.resize(at + n);
        if (n != 0) std::memcpy(b.data() + at, p, n);
        return *this;
    }
    template <class T>
    Bytes& put(T v) {
        return append(&v, sizeof(T));
    }
    Bytes& u8(std::uint8_t v) { return put(v); }
    Bytes& u32(std::uint32_t v) { return put(v); }
    Bytes& i32(std::int32_t v) { return put(v); }
    Bytes& u64(std::uint64_t v) { return put(v); }
    Bytes& f32(float v) { return put(v); }
    Bytes& raw(std::string_view s) { return append(s.data(), s.size()); }
    Bytes& str(std::string_view s) { return u64(s.size()).raw(s); }
    Bytes& zeros(std::size_t n) {
        b.resize(b.size() + n, 0);
        return *this;
    }
    Bytes& pad_to(std::size_t align) {
        while (b.size() % align != 0) b.push_back(0);
        return *this;
    }
    std::size_t size() const { return b.size(); }

    // Header: magic, version, counts.
    Bytes& header(std::uint64_t n_tensors, std::uint64_t n_kv, std::uint32_t version = 3) {
        return raw("GGUF").u32(version).u64(n_tensors).u64(n_kv);
    }
    // Key and value type of a metadata entry (the caller appends the value).
    Bytes& key(std::string_view k, std::uint32_t type) { return str(k).u32(type); }
    // Tensor info with dims ne[0] first.
    Bytes& tensor(std::string_view name, std::initializer_list<std::uint64_t> dims, std::uint32_t type,
                  std::uint64_t offset) {
        str(name).u32(static_cast<std::uint32_t>(dims.size()));
        for (auto d : dims) u64(d);
        return u32(type).u64(offset);
    }
};

}  // namespace gguf_test

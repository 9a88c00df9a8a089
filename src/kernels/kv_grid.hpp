// Where a page keeps one head's keys and values (model/kv_type.hpp). The one definition the
// cache's accessors and the attention kernels share.
//
// Keys: a grid [dim][position], `block` positions a dim, elements of `element` bytes (F32 4, F16
// 2, Q8_0's int8 quants 1), and for Q8_0 the fp16 block scales after the hd * block quants as
// [dim / 32][position].
//
// Values: slabs [slab][position][value], each position's values [32 s, 32 s + 32) in slab s
// (one Q8_0 block for Q8_0); a head whose hd is not a multiple of 32 (F32, F16 only) is one
// slab, i.e. rows. Attention sums a head's values in passes of 32 or 64 of them (as many as
// its accumulators hold), so a pass reads its slabs front to back rather than a part of each row.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

/// Bytes of a grid element for the kernels' KV type codes (0 F32, 1 F16, 2 Q8_0's quants).
template <int T>
inline constexpr std::size_t kGridElement = T == 0 ? 4 : T == 1 ? 2 : 1;

/// Byte offset of dim d of position u.
constexpr std::size_t grid_at(std::int64_t d, std::int64_t u, std::int64_t block, std::size_t element) noexcept {
    return (static_cast<std::size_t>(d) * static_cast<std::size_t>(block) + static_cast<std::size_t>(u)) * element;
}

/// Byte offset of the Q8_0 scale of position u for the block (32 dims) that holds dim d.
constexpr std::size_t grid_scale_at(std::int64_t hd, std::int64_t d, std::int64_t u, std::int64_t block) noexcept {
    return static_cast<std::size_t>(hd) * static_cast<std::size_t>(block) + grid_at(d / 32, u, block, 2);
}

/// Values a slab holds for a head of hd values.
constexpr std::int64_t slab_values(std::int64_t hd) noexcept { return hd % 32 == 0 ? 32 : hd; }

/// Bytes of one position's slab for a KV type code (0 F32, 1 F16, 2 Q8_0: a block, its fp16
/// scale and 32 quants); the codes are KvType's values.
constexpr std::size_t slab_bytes(int type, std::int64_t hd) noexcept {
    return type == 2 ? 34 : static_cast<std::size_t>(slab_values(hd)) * (type == 0 ? 4 : 2);
}

template <int T>
constexpr std::size_t slab_bytes(std::int64_t hd) noexcept {
    return slab_bytes(T, hd);
}

/// Byte offset of slab s of position u, slabs of `bytes` bytes a position.
constexpr std::size_t slab_at(std::int64_t s, std::int64_t u, std::int64_t block, std::size_t bytes) noexcept {
    return (static_cast<std::size_t>(s) * static_cast<std::size_t>(block) + static_cast<std::size_t>(u)) * bytes;
}

}  // namespace ember::kernels

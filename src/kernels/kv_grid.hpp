// Where a key grid keeps its values (model/kv_type.hpp): a page's keys of one head as
// [dim][position], `block` positions a dim, elements of `element` bytes (F32 4, F16 2, Q8_0's
// int8 quants 1), and for Q8_0 the fp16 block scales after the hd * block quants as
// [dim / 32][position]. The one definition the cache's accessors and the attention kernels share.
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

}  // namespace ember::kernels

// How the KV cache stores one row (the keys or values of one position in one layer): F32, F16
// or Q8_0 (blocks of 32 values with an fp16 scale; a block never straddles two heads, so the
// head dimension must be a multiple of 32).
//
// Per page of `block` positions and per head (kernels/kv_grid.hpp), keys are stored transposed,
// as a grid [dim][position] (so that attention scores 16 positions with one vector of
// multiply-adds, kernels/attention.hpp): F32 and F16 hold element (d, u) at d * block + u; Q8_0
// holds the int8 quants the same way (hd * block bytes) followed by the fp16 block scales
// [hd / 32][block]. Values are stored as slabs of 32 values [slab][position] (a row of the
// type's encoding each: a Q8_0 slab is one block), or as rows where hd is not a multiple of 32.
// Either takes block * (its row bytes), as rows would.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/types.hpp"

namespace ember::model {

/// "F32", "F16", "Q8_0".
const char* kv_type_name(KvType type) noexcept;
/// Bytes of one row of n values. Throws ember::Error when `type` cannot hold rows of heads of
/// head_dim values (Q8_0: head_dim % 32 != 0).
std::size_t kv_row_bytes(KvType type, std::int64_t n, std::int64_t head_dim);
/// Stores n floats as a row (Q8_0: rounded as ggml's quantize_row_q8_0_ref).
void kv_store_row(KvType type, const float* src, std::uint8_t* dst, std::int64_t n) noexcept;
/// Reads a row back as n floats.
void kv_load_row(KvType type, const std::uint8_t* src, float* dst, std::int64_t n) noexcept;

/// Stores one head's hd keys as position u of a key grid of `block` positions (see above);
/// the same rounding as kv_store_row.
void kv_store_key(KvType type, const float* src, std::uint8_t* grid, std::int64_t block, std::int64_t u,
                  std::int64_t hd) noexcept;
/// Reads position u of a key grid back as hd floats.
void kv_load_key(KvType type, const std::uint8_t* grid, std::int64_t block, std::int64_t u, std::int64_t hd,
                 float* dst) noexcept;
/// Copies position su of grid `src` to position du of grid `dst` (same type, block and hd), bytes as stored.
void kv_copy_key(KvType type, const std::uint8_t* src, std::int64_t su, std::uint8_t* dst, std::int64_t du,
                 std::int64_t block, std::int64_t hd) noexcept;

/// Stores one head's hd values as position u of the value slabs of `block` positions (see
/// above); the same rounding as kv_store_row.
void kv_store_value(KvType type, const float* src, std::uint8_t* slabs, std::int64_t block, std::int64_t u,
                    std::int64_t hd) noexcept;
/// Reads position u of value slabs back as hd floats.
void kv_load_value(KvType type, const std::uint8_t* slabs, std::int64_t block, std::int64_t u, std::int64_t hd,
                   float* dst) noexcept;
/// Copies position su of slabs `src` to position du of slabs `dst` (same type, block and hd), bytes as stored.
void kv_copy_value(KvType type, const std::uint8_t* src, std::int64_t su, std::uint8_t* dst, std::int64_t du,
                   std::int64_t block, std::int64_t hd) noexcept;

}  // namespace ember::model

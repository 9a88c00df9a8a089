#include "model/kv_type.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/kv_grid.hpp"
#include "kernels/quant_blocks.hpp"
#include "kernels/quants.hpp"
#include "runtime/fail.hpp"

namespace ember::model {

const char* kv_type_name(KvType type) noexcept {
    switch (type) {
        case KvType::f32: return "F32";
        case KvType::f16: return "F16";
        case KvType::q8_0: return "Q8_0";
    }
    return "unknown";
}

std::size_t kv_row_bytes(KvType type, std::int64_t n, std::int64_t head_dim) {
    switch (type) {
        case KvType::f32: return static_cast<std::size_t>(n) * 4;
        case KvType::f16: return static_cast<std::size_t>(n) * 2;
        case KvType::q8_0:
            if (head_dim % kernels::kQK != 0) {
                fail(std::string("KV cache type Q8_0 needs a head dimension that is a multiple of 32; this model's is ") +
                     std::to_string(head_dim) + " (use F16 or F32)");
            }
            return static_cast<std::size_t>(n / kernels::kQK) * sizeof(kernels::BlockQ8_0);
    }
    fail("unknown KV cache type " + std::to_string(static_cast<int>(type)));
}

void kv_store_row(KvType type, const float* src, std::uint8_t* dst, std::int64_t n) noexcept {
    switch (type) {
        case KvType::f32: std::memcpy(dst, src, static_cast<std::size_t>(n) * 4); return;
        case KvType::f16: kernels::quantize_act_f16(src, dst, n); return;
        case KvType::q8_0: kernels::quantize_row_q8_0(src, reinterpret_cast<kernels::BlockQ8_0*>(dst), n); return;
    }
}

void kv_load_row(KvType type, const std::uint8_t* src, float* dst, std::int64_t n) noexcept {
    switch (type) {
        case KvType::f32: std::memcpy(dst, src, static_cast<std::size_t>(n) * 4); return;
        case KvType::f16: kernels::dequantize_f16(src, dst, n); return;
        case KvType::q8_0: kernels::dequantize_q8_0(src, dst, n); return;
    }
}

namespace {

/// fn(std::integral_constant<std::size_t, E>{}) with E the bytes of one of the type's grid
/// elements (Q8_0: a quant; its scales follow the quants): a copy of a constant size is a plain
/// load and store, one of a run-time size a call per element.
template <class Fn>
void with_element_bytes(KvType type, Fn&& fn) {
    switch (type) {
        case KvType::f32: return fn(std::integral_constant<std::size_t, 4>{});
        case KvType::f16: return fn(std::integral_constant<std::size_t, 2>{});
        case KvType::q8_0: return fn(std::integral_constant<std::size_t, 1>{});
    }
}

}  // namespace

void kv_store_key(KvType type, const float* src, std::uint8_t* grid, std::int64_t block, std::int64_t u,
                  std::int64_t hd) noexcept {
    if (type == KvType::q8_0) {
        kernels::BlockQ8_0 blocks[16];
        for (std::int64_t b = 0; b < hd / kernels::kQK; b += 16) {  // 16 blocks (512 values) at a time
            const std::int64_t nb = std::min<std::int64_t>(16, hd / kernels::kQK - b);
            kernels::quantize_row_q8_0(src + b * kernels::kQK, blocks, nb * kernels::kQK);
            for (std::int64_t i = 0; i < nb; ++i) {
                for (std::int64_t j = 0; j < kernels::kQK; ++j) {
                    grid[kernels::grid_at((b + i) * kernels::kQK + j, u, block, 1)] = static_cast<std::uint8_t>(blocks[i].qs[j]);
                }
                std::memcpy(grid + kernels::grid_scale_at(hd, (b + i) * kernels::kQK, u, block), &blocks[i].d, 2);
            }
        }
        return;
    }
    with_element_bytes(type, [&](auto element) {
        constexpr std::size_t e = decltype(element)::value;
        alignas(4) std::uint8_t stored[256 * 4];
        for (std::int64_t d0 = 0; d0 < hd; d0 += 256) {  // rounded as a row, 256 values at a time
            const std::int64_t n = std::min<std::int64_t>(256, hd - d0);
            kv_store_row(type, src + d0, stored, n);
            for (std::int64_t d = 0; d < n; ++d) {
                std::memcpy(grid + kernels::grid_at(d0 + d, u, block, e), stored + static_cast<std::size_t>(d) * e, e);
            }
        }
    });
}

void kv_load_key(KvType type, const std::uint8_t* grid, std::int64_t block, std::int64_t u, std::int64_t hd,
                 float* dst) noexcept {
    if (type == KvType::q8_0) {
        for (std::int64_t b = 0; b < hd / kernels::kQK; ++b) {
            kernels::BlockQ8_0 blk;
            std::memcpy(&blk.d, grid + kernels::grid_scale_at(hd, b * kernels::kQK, u, block), 2);
            for (std::int64_t j = 0; j < kernels::kQK; ++j) {
                blk.qs[j] = static_cast<std::int8_t>(grid[kernels::grid_at(b * kernels::kQK + j, u, block, 1)]);
            }
            kernels::dequantize_q8_0(&blk, dst + b * kernels::kQK, kernels::kQK);
        }
        return;
    }
    with_element_bytes(type, [&](auto element) {
        constexpr std::size_t e = decltype(element)::value;
        alignas(4) std::uint8_t stored[256 * 4];
        for (std::int64_t d0 = 0; d0 < hd; d0 += 256) {
            const std::int64_t n = std::min<std::int64_t>(256, hd - d0);
            for (std::int64_t d = 0; d < n; ++d) {
                std::memcpy(stored + static_cast<std::size_t>(d) * e, grid + kernels::grid_at(d0 + d, u, block, e), e);
            }
            kv_load_row(type, stored, dst + d0, n);
        }
    });
}

void kv_copy_key(KvType type, const std::uint8_t* src, std::int64_t su, std::uint8_t* dst, std::int64_t du,
                 std::int64_t block, std::int64_t hd) noexcept {
    with_element_bytes(type, [&](auto element) {
        constexpr std::size_t e = decltype(element)::value;
        for (std::int64_t d = 0; d < hd; ++d) {
            std::memcpy(dst + kernels::grid_at(d, du, block, e), src + kernels::grid_at(d, su, block, e), e);
        }
    });
    if (type == KvType::q8_0) {  // the scales after the quants
        for (std::int64_t d = 0; d < hd; d += kernels::kQK) {
            std::memcpy(dst + kernels::grid_scale_at(hd, d, du, block), src + kernels::grid_scale_at(hd, d, su, block), 2);
        }
    }
}

namespace {

static_assert(static_cast<int>(KvType::f32) == 0 && static_cast<int>(KvType::f16) == 1 &&
                  static_cast<int>(KvType::q8_0) == 2,
              "kernels::slab_bytes takes KvType's values as its type codes");
static_assert(kernels::slab_bytes(2, 64) == sizeof(kernels::BlockQ8_0));

// fn(s, first value, values, slab bytes) for each value slab of a head of hd values (Q8_0: hd
// is a multiple of 32, checked where the pool is made).
template <class Fn>
void for_each_slab(KvType type, std::int64_t hd, Fn&& fn) noexcept {
    const std::int64_t w = kernels::slab_values(hd);
    const std::size_t bytes = kernels::slab_bytes(static_cast<int>(type), hd);
    for (std::int64_t s = 0; s * w < hd; ++s) fn(s, s * w, w, bytes);
}

}  // namespace

void kv_store_value(KvType type, const float* src, std::uint8_t* slabs, std::int64_t block, std::int64_t u,
                    std::int64_t hd) noexcept {
    for_each_slab(type, hd, [&](std::int64_t s, std::int64_t i, std::int64_t n, std::size_t bytes) {
        kv_store_row(type, src + i, slabs + kernels::slab_at(s, u, block, bytes), n);
    });
}

void kv_load_value(KvType type, const std::uint8_t* slabs, std::int64_t block, std::int64_t u, std::int64_t hd,
                   float* dst) noexcept {
    for_each_slab(type, hd, [&](std::int64_t s, std::int64_t i, std::int64_t n, std::size_t bytes) {
        kv_load_row(type, slabs + kernels::slab_at(s, u, block, bytes), dst + i, n);
    });
}

void kv_copy_value(KvType type, const std::uint8_t* src, std::int64_t su, std::uint8_t* dst, std::int64_t du,
                   std::int64_t block, std::int64_t hd) noexcept {
    for_each_slab(type, hd, [&](std::int64_t s, std::int64_t, std::int64_t, std::size_t bytes) {
        std::memcpy(dst + kernels::slab_at(s, du, block, bytes), src + kernels::slab_at(s, su, block, bytes), bytes);
    });
}

}  // namespace ember::model

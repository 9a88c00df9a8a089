// The register-tile driver shared by every ISA's tile kernels: n_w weight rows x n_a activation
// rows in R x T tiles, then the R x 1, 1 x T and 1 x 1 edges. Micro::run<R, T> computes one tile;
// each (row, token) result must not depend on R and T (batch invariance), which the tests check
// by comparing tiles with vec_dot bit for bit. Internal linkage (see x86_common-inl.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/isa/with_count-inl.hpp"

namespace ember::kernels {
namespace {

/// The R x n tile for the last n < T tokens of a sweep: one tile rather than n R x 1 tiles, which
/// read the rows n times with a fraction of the chains (a 64-token block in 4 x 6 float tiles left
/// 4 tokens to R x 1 tiles).
template <class Micro, int R, int T>
inline void run_rest(std::int64_t n, std::int64_t nb, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                     std::size_t as, float* y, std::int64_t ldy) {
    with_count<T - 1>(n, [&]<int N>() { Micro::template run<R, N>(nb, w, ws, a, as, y, ldy); });
}

/// Token tiles outside, row tiles inside: a tile's T activation rows stay in cache while the
/// block's weight rows pass by (the other order re-read the activations per row tile: with
/// 5632-wide rows, 64 tokens of F32 activations outgrow L2, and F32/F16 GEMM ran 30-50% slower).
/// kRowsOuter swaps the order, for rows small enough to stay in L1 while the tokens pass by
/// (float_tile's BF16 and F16 rows).
template <class Micro, int R, int T, bool kRowsOuter = false>
inline void sweep_tiles(std::int64_t nb, const void* wv, std::size_t ws, std::int64_t n_w,
                        const void* av, std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {
    const auto* w = static_cast<const std::uint8_t*>(wv);
    const auto* a = static_cast<const std::uint8_t*>(av);
    const std::int64_t t_full = n_a / T * T;
    const std::int64_t r_full = n_w / R * R;
    if constexpr (kRowsOuter) {
        for (std::int64_t r = 0; r < r_full; r += R) {
            for (std::int64_t t = 0; t < t_full; t += T) {
                Micro::template run<R, T>(nb, w + r * ws, ws, a + t * as, as, y + t * ldy + r, ldy);
            }
            run_rest<Micro, R, T>(n_a - t_full, nb, w + r * ws, ws, a + t_full * as, as, y + t_full * ldy + r, ldy);
        }
    } else {
        for (std::int64_t t = 0; t < t_full; t += T) {
            for (std::int64_t r = 0; r < r_full; r += R) {
                Micro::template run<R, T>(nb, w + r * ws, ws, a + t * as, as, y + t * ldy + r, ldy);
            }
        }
        for (std::int64_t r = 0; r < r_full; r += R) {
            run_rest<Micro, R, T>(n_a - t_full, nb, w + r * ws, ws, a + t_full * as, as, y + t_full * ldy + r, ldy);
        }
    }
    std::int64_t r = r_full;
    for (; r < n_w; ++r) {
        for (std::int64_t t = 0; t < t_full; t += T) {
            Micro::template run<1, T>(nb, w + r * ws, ws, a + t * as, as, y + t * ldy + r, ldy);
        }
        run_rest<Micro, 1, T>(n_a - t_full, nb, w + r * ws, ws, a + t_full * as, as, y + t_full * ldy + r, ldy);
    }
}

/// One weight row against groups of up to 4 activation rows: multi[nt - 1] handles nt rows
/// (the K-quant tiles, which unpack each weight superblock once per group).
using MultiDot = void (*)(std::int64_t n, const void* w, const std::uint8_t* a, std::size_t a_stride, float* out);

/// vec_dot through a MultiDot of one token.
inline float dot1(MultiDot one, std::int64_t n, const void* w, const void* a) {
    float out;
    one(n, w, static_cast<const std::uint8_t*>(a), 0, &out);
    return out;
}

inline void sweep_rows_by4(const MultiDot* multi, std::int64_t n, const void* w, std::size_t w_stride,
                           std::int64_t n_w, const void* a, std::size_t a_stride, std::int64_t n_a,
                           float* y, std::int64_t ldy) {
    const auto* wb = static_cast<const std::uint8_t*>(w);
    const auto* ab = static_cast<const std::uint8_t*>(a);
    for (std::int64_t r = 0; r < n_w; ++r) {
        const std::uint8_t* wr = wb + static_cast<std::size_t>(r) * w_stride;
        for (std::int64_t t = 0; t < n_a; t += 4) {
            const std::int64_t nt = n_a - t < 4 ? n_a - t : 4;
            float out[4];
            multi[nt - 1](n, wr, ab + static_cast<std::size_t>(t) * a_stride, a_stride, out);
            for (std::int64_t j = 0; j < nt; ++j) y[(t + j) * ldy + r] = out[j];
        }
    }
}

}  // namespace
}  // namespace ember::kernels

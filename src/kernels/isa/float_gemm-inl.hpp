// Register-tiled GEMM of float weight rows (F32, F16, BF16) with F32 / BF16 activation rows,
// written once with xsimd and instantiated per architecture by float_<isa>.cpp.
//
// Batch invariance by construction: the result for a (weight row, activation row) pair is one
// accumulator vector that takes fma(w[i..i+L), x[i..i+L), acc) for the lane chunks i = 0, L, 2L,
// ... in order (the last chunk zero-padded), then one horizontal sum. A tile of R rows x T
// tokens only runs R*T such chains side by side, so every pair gets the same value in any tile
// shape, in any batch and on any thread; vec_dot is the 1 x 1 tile. Small batches (decode) use
// taller tiles so that enough independent chains cover the FMA latency.
//
// Weights are read as stored (mapped GGUF rows, no repacking): F16 is widened by the ISA's
// converter (F16C / AVX-512 vcvtph2ps, NEON fcvtl), BF16 by a 16-bit shift. Kernel bodies only,
// internal linkage (see x86_common-inl.hpp): include from ISA TUs alone.
#pragma once

#include "kernels/isa/float_kernels-inl.hpp"
#include "kernels/isa/tile_sweep-inl.hpp"

namespace ember::kernels {
namespace {

// Lane loaders of one row format: a full chunk, and the zero-padded tail of `left` elements.
template <class A>
struct F32Lanes {
    using Elem = float;
    static FB<A> full(const float* p) { return FB<A>::load_unaligned(p); }
    static FB<A> part(const float* p, std::int64_t left) { return load_part<A>(p, left); }
};
template <class A>
struct F16Lanes {
    using Elem = std::uint16_t;
    static FB<A> full(const std::uint16_t* p) { return widen_fp16<A>(p, kLanes<A>); }
    static FB<A> part(const std::uint16_t* p, std::int64_t left) { return widen_fp16<A>(p, left); }
};
template <class A>
struct BF16Lanes {
    using Elem = std::uint16_t;
    static FB<A> full(const std::uint16_t* p) { return widen_bf16<A>(p, kLanes<A>); }
    static FB<A> part(const std::uint16_t* p, std::int64_t left) { return widen_bf16<A>(p, left); }
};

/// One R x T tile (the Micro of sweep_tiles): weight rows in format W, activation rows in X.
template <class A, class W, class X>
struct FloatMicro {
    template <int R, int T>
    static void run(std::int64_t n, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                    std::size_t as, float* y, std::int64_t ldy) {
        const typename W::Elem* wr[R];
        const typename X::Elem* ar[T];
        for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const typename W::Elem*>(w + r * ws);
        for (int t = 0; t < T; ++t) ar[t] = reinterpret_cast<const typename X::Elem*>(a + t * as);
        FB<A> acc[R][T];
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) acc[r][t] = FB<A>(0.0f);
        std::int64_t i = 0;
        for (; i + kLanes<A> <= n; i += kLanes<A>) {
            FB<A> wv[R];
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) wv[r] = W::full(wr[r] + i);
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t) {
                const FB<A> xv = X::full(ar[t] + i);
#pragma GCC unroll 8
                for (int r = 0; r < R; ++r) acc[r][t] = xsimd::fma(wv[r], xv, acc[r][t]);
            }
        }
        if (i < n) {  // the same fma on zero-padded lanes
            for (int r = 0; r < R; ++r) {
                const FB<A> wv = W::part(wr[r] + i, n - i);
                for (int t = 0; t < T; ++t) acc[r][t] = xsimd::fma(wv, X::part(ar[t] + i, n - i), acc[r][t]);
            }
        }
        for (int t = 0; t < T; ++t)
            for (int r = 0; r < R; ++r) y[t * ldy + r] = xsimd::hadd(acc[r][t]);
    }
};

/// Tile shapes per register file: R x T accumulators plus R weight chunks and one activation
/// chunk must fit in the vector registers (32 on AVX-512 and NEON, 16 on AVX2).
template <class A>
struct FloatTileShape {
    static constexpr int kWide = xsimd::batch<float, A>::size == 8 ? 16 : 32;  // registers
    static constexpr int kRows = kWide == 16 ? 3 : 4;
    static constexpr int kToks = kWide == 16 ? 4 : 6;
};

/// The float TileFn: decode-sized batches (1-2 tokens) in 8-row tiles, larger ones in
/// kRows x kToks tiles (sweep_tiles handles the edges).
template <class Micro, class A>
inline void float_tile(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a,
                       std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {
    using S = FloatTileShape<A>;
    if (n_a == 1) {
        sweep_tiles<Micro, 8, 1>(n, w, ws, n_w, a, as, n_a, y, ldy);
    } else if (n_a == 2) {
        sweep_tiles<Micro, 8, 2>(n, w, ws, n_w, a, as, n_a, y, ldy);
    } else {
        sweep_tiles<Micro, S::kRows, S::kToks>(n, w, ws, n_w, a, as, n_a, y, ldy);
    }
}

/// vec_dot of a float Micro: its 1 x 1 tile (so vec_dot and every tile agree bit for bit).
template <class Micro>
inline float float_dot(std::int64_t n, const void* w, const void* a) {
    float out;
    Micro::template run<1, 1>(n, static_cast<const std::uint8_t*>(w), 0, static_cast<const std::uint8_t*>(a), 0,
                              &out, 1);
    return out;
}

}  // namespace
}  // namespace ember::kernels

/// Defines vec_dot_* and tile_* of F32 and F16 weights (F32 activations) and BF16 weights (BF16
/// activations) in the enclosing ISA namespace for xsimd architecture `Arch`.
#define EMBER_FLOAT_GEMM_EXPORTS(Arch)                                                              \
    using MicroF32 = FloatMicro<Arch, F32Lanes<Arch>, F32Lanes<Arch>>;                              \
    using MicroF16 = FloatMicro<Arch, F16Lanes<Arch>, F32Lanes<Arch>>;                              \
    using MicroBF16 = FloatMicro<Arch, BF16Lanes<Arch>, BF16Lanes<Arch>>;                           \
    float vec_dot_f32(std::int64_t n, const void* w, const void* a) { return float_dot<MicroF32>(n, w, a); } \
    float vec_dot_f16(std::int64_t n, const void* w, const void* a) { return float_dot<MicroF16>(n, w, a); } \
    float vec_dot_bf16(std::int64_t n, const void* w, const void* a) { return float_dot<MicroBF16>(n, w, a); } \
    EMBER_TILE_SIGNATURE(tile_f32) { float_tile<MicroF32, Arch>(n, w, w_stride, n_w, a, a_stride, n_a, y, ldy); } \
    EMBER_TILE_SIGNATURE(tile_f16) { float_tile<MicroF16, Arch>(n, w, w_stride, n_w, a, a_stride, n_a, y, ldy); } \
    EMBER_TILE_SIGNATURE(tile_bf16) { float_tile<MicroBF16, Arch>(n, w, w_stride, n_w, a, a_stride, n_a, y, ldy); }

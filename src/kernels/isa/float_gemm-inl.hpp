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

#if defined(__AVX512F__)
/// The horizontal sums of v0..v3 into y[0..3], four at a time (transposed): halves of 8, halves
/// of 4, then in each 128-bit lane either lanes 0 + 1 and 2 + 3 (kAdjacentFirst: xsimd::hadd's
/// order) or 0 + 2 and 1 + 3 (_mm512_reduce_add_ps's), then those two. The same additions as
/// the one-row versions, so the same bits, in 14 instructions where four one-row sums take ~28.
template <bool kAdjacentFirst>
inline void store_sums4_avx512(__m512 v0, __m512 v1, __m512 v2, __m512 v3, float* y) {
    // lanes i and i + 8 of v0 | v1, then of v2 | v3
    const __m512 s01 = _mm512_add_ps(_mm512_shuffle_f32x4(v0, v1, 0x44), _mm512_shuffle_f32x4(v0, v1, 0xEE));
    const __m512 s23 = _mm512_add_ps(_mm512_shuffle_f32x4(v2, v3, 0x44), _mm512_shuffle_f32x4(v2, v3, 0xEE));
    // lanes i and i + 4 of each: one 128-bit lane per row
    const __m512 s4 = _mm512_add_ps(_mm512_shuffle_f32x4(s01, s23, 0x88), _mm512_shuffle_f32x4(s01, s23, 0xDD));
    constexpr int kFirst = kAdjacentFirst ? 0xB1 : 0x4E, kSecond = kAdjacentFirst ? 0x4E : 0xB1;
    const __m512 s2 = _mm512_add_ps(s4, _mm512_permute_ps(s4, kFirst));
    const __m512 s1 = _mm512_add_ps(s2, _mm512_permute_ps(s2, kSecond));
    const __m512 firsts = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), s1);
    _mm_storeu_ps(y, _mm512_castps512_ps128(firsts));
}
#endif

/// y[r] = xsimd::hadd(v[r]) for r < R, bit for bit; on AVX-512 four at a time. One by one the
/// 24 sums of a 4 x 6 tile held ~6% of a 2048-column F16 GEMM's samples; four at a time: F16
/// +3%, F32 +2-6% (one thread, 16 rows x 64 tokens, interleaved).
template <class A, int R>
inline void store_hadds(const FB<A> (&v)[R], float* y) {
#if defined(__AVX512F__)
    if constexpr (std::is_same_v<A, xsimd::avx512bw> && R % 4 == 0) {
        for (int r = 0; r < R; r += 4) store_sums4_avx512<true>(v[r], v[r + 1], v[r + 2], v[r + 3], y + r);
        return;
    }
#endif
    for (int r = 0; r < R; ++r) y[r] = xsimd::hadd(v[r]);
}

/// The tile Micro (sweep_tiles) of a chunk kernel M: M::step<R, T>(i, ...) takes chunk i (of
/// M::kStep elements) into the R x T accumulators, M::finish the zero-padded tail and the sums.
/// span() runs whole chunks [i0, i1), so a caller may split them into blocks (sweep_k_blocks)
/// and get run()'s values bit for bit.
template <class M>
struct SpanMicro {
    template <int R, int T, class Acc>
    static void span(std::int64_t i0, std::int64_t i1, const std::uint8_t* w, std::size_t ws,
                     const std::uint8_t* a, std::size_t as, Acc (&acc)[R][T]) {
        Acc c[R][T];  // in registers for the loop (GCC keeps a referenced array in memory)
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) c[r][t] = acc[r][t];
        for (std::int64_t i = i0; i < i1; i += M::kStep) {
            if constexpr (T <= 2) prefetch_rows<R>(i, i1, w, ws);
            M::template step<R, T>(i, w, ws, a, as, c);
        }
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) acc[r][t] = c[r][t];
    }

    /// Decode (one or two tokens) reads each of the R weight rows once, straight from the file's
    /// pages: the hardware prefetcher alone kept too few of the R streams' lines in flight.
    /// Prefetches kDecodeAhead bytes ahead in each row, once a line; past the rows' end, into
    /// the same rows of the next R-row tile, so that it does not open on demand misses.
    template <int R>
    [[gnu::always_inline]] static void prefetch_rows(std::int64_t i, std::int64_t i1, const std::uint8_t* w,
                                                     std::size_t ws) {
        constexpr std::size_t kDecodeAhead = 1024, kLine = 64;
        constexpr std::size_t kStepBytes = static_cast<std::size_t>(M::kStep) * M::kWeightBytes;
        const std::size_t at = static_cast<std::size_t>(i) * M::kWeightBytes + kDecodeAhead;
        if (at % kLine >= kStepBytes) return;  // this line's prefetch went out at an earlier step
        const std::size_t end = static_cast<std::size_t>(i1) * M::kWeightBytes;
        const std::uint8_t* p = at < end ? w + at : w + R * ws + (at - end);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) __builtin_prefetch(p + r * ws, 0, 3);
    }

    template <int R, int T>
    static void run(std::int64_t n, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                    std::size_t as, float* y, std::int64_t ldy) {
        typename M::Acc acc[R][T];
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) acc[r][t] = M::zero();
        span<R, T>(0, n / M::kStep * M::kStep, w, ws, a, as, acc);
        M::template finish<R, T>(n, w, ws, a, as, acc, y, ldy);
    }
};

/// One R x T tile: weight rows in format W, activation rows in X.
template <class A, class W, class X>
struct FloatMicro : SpanMicro<FloatMicro<A, W, X>> {
    using Acc = FB<A>;
    static constexpr std::int64_t kStep = kLanes<A>;
    static constexpr std::size_t kWeightBytes = sizeof(typename W::Elem);
    static Acc zero() { return Acc(0.0f); }

    template <int R, int T>
    [[gnu::always_inline]] static void step(std::int64_t i, const std::uint8_t* w, std::size_t ws,
                                            const std::uint8_t* a, std::size_t as, Acc (&c)[R][T]) {
        Acc wv[R];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) wv[r] = W::full(reinterpret_cast<const typename W::Elem*>(w + r * ws) + i);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
            const Acc xv = X::full(reinterpret_cast<const typename X::Elem*>(a + t * as) + i);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) c[r][t] = xsimd::fma(wv[r], xv, c[r][t]);
        }
    }

    template <int R, int T>
    static void finish(std::int64_t n, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                       std::size_t as, Acc (&acc)[R][T], float* y, std::int64_t ldy) {
        const std::int64_t i = n / kStep * kStep;
        if (i < n) {  // the same fma on zero-padded lanes
            for (int r = 0; r < R; ++r) {
                const Acc wv = W::part(reinterpret_cast<const typename W::Elem*>(w + r * ws) + i, n - i);
                for (int t = 0; t < T; ++t) {
                    const Acc xv = X::part(reinterpret_cast<const typename X::Elem*>(a + t * as) + i, n - i);
                    acc[r][t] = xsimd::fma(wv, xv, acc[r][t]);
                }
            }
        }
        for (int t = 0; t < T; ++t) {
            Acc column[R];
            for (int r = 0; r < R; ++r) column[r] = acc[r][t];
            store_hadds<A, R>(column, y + t * ldy);
        }
    }
};

/// sweep_tiles with the R x T tiles' chunks taken in blocks of kBlock elements: for each T
/// activation rows, every R-row tile of up to kTiles of them (the 16 rows matmul hands a call)
/// runs one block before any runs the next, so the T rows' block is read from L2 once and then
/// from L1 by the other tiles. Unblocked, a tile's T rows (48 KiB of F32 at 2048 columns, 132 at
/// 5632) passed L1 in full for each tile: every activation load came from L2, and the float
/// GEMM ran at about half the FMA peak. Each (row, token) pair keeps one accumulator that takes
/// the chunks in order, so the results equal sweep_tiles' bit for bit.
/// A tile parks its R x T accumulators in memory between blocks: 1024 elements (6 F32 rows: 24
/// KiB of L1) park them a quarter as often as 256 did (one thread, 16 rows x 64 tokens of 2048
/// columns: F16 175 -> 186-193 GFLOP/s, BF16 265 -> 305-314, F32 132 -> 138-149; 2048 was
/// slower for F32, whose weight rows then crowd the activations out of L1).
template <class Micro, int R, int T>
inline void sweep_k_blocks(std::int64_t n, const void* wv, std::size_t ws, std::int64_t n_w,
                           const void* av, std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {
    constexpr int kTiles = 4;
    constexpr std::int64_t kBlock = 1024;
    static_assert(kBlock % Micro::kStep == 0);
    using Acc = typename Micro::Acc;
    const auto* w = static_cast<const std::uint8_t*>(wv);
    const auto* a = static_cast<const std::uint8_t*>(av);
    const std::int64_t t_full = n_a / T * T, r_full = n_w / R * R;
    const std::int64_t full = n / Micro::kStep * Micro::kStep;
    for (std::int64_t t = 0; t < t_full; t += T) {
        for (std::int64_t r0 = 0; r0 < r_full; r0 += R * kTiles) {
            const int tiles = static_cast<int>(std::min<std::int64_t>(kTiles, (r_full - r0) / R));
            Acc acc[kTiles][R][T];
            for (int k = 0; k < tiles; ++k)
                for (int r = 0; r < R; ++r)
                    for (int j = 0; j < T; ++j) acc[k][r][j] = Micro::zero();
            for (std::int64_t i0 = 0; i0 < full; i0 += kBlock) {
                const std::int64_t i1 = std::min(full, i0 + kBlock);
                for (int k = 0; k < tiles; ++k) {
                    Micro::template span<R, T>(i0, i1, w + (r0 + k * R) * ws, ws, a + t * as, as, acc[k]);
                }
            }
            for (int k = 0; k < tiles; ++k) {
                Micro::template finish<R, T>(n, w + (r0 + k * R) * ws, ws, a + t * as, as, acc[k],
                                             y + t * ldy + r0 + k * R, ldy);
            }
        }
    }
    sweep_tiles<Micro, R, T>(n, w + r_full * ws, ws, n_w - r_full, a, as, n_a, y + r_full, ldy);
    for (std::int64_t r = 0; r < r_full; r += R) {
        run_rest<Micro, R, T>(n_a - t_full, n, w + r * ws, ws, a + t_full * as, as, y + t_full * ldy + r, ldy);
    }
}

/// Prefill of 2-byte weights (BF16, F16) sweeps rows outside and tokens inside (sweep_tiles'
/// kRowsOuter) where a tile's R weight rows fit in kRowsInL1 bytes, half of a 32 KiB L1: the rows
/// stay in L1 across all of the block's token tiles and the activations come from L2
/// (sweep_k_blocks keeps those in L1 and reads the rows from L2 again for each token tile). One
/// thread, 4-row tiles of 2048 columns (`bench_float_gemm 1 3 512`, three interleaved rounds,
/// GFLOP/s): BF16 5632x2048 210 / 212 / 227 -> 257 / 236 / 244, 2048x2048 262 / 263 / 234 ->
/// 281 / 261 / 288. Slower with rows of 3072 or 4096 columns. F16 (f32 activations, twice the
/// bytes from L2), TinyLlama on the Zen 5 VM: 22 of 24 interleaved rounds won (pp64 to pp512, one
/// and two threads), about +3% (0 to 6% by sitting); AVX2 even (docs/performance.md).
constexpr std::size_t kRowsInL1 = std::size_t{16} << 10;

/// Tile shapes per register file: R x T accumulators plus R weight chunks and one activation
/// chunk must fit in the vector registers (32 on AVX-512 and NEON, 16 on AVX2).
template <class A>
struct FloatTileShape {
    static constexpr int kWide = xsimd::batch<float, A>::size == 8 ? 16 : 32;  // registers
    static constexpr int kRows = kWide == 16 ? 3 : 4;
    static constexpr int kToks = kWide == 16 ? 4 : 6;
};

/// The float TileFn: decode-sized batches (1-2 tokens) in 8-row tiles, larger ones in
/// kRows x kToks tiles, rows outside where they fit L1 (BF16, F16), else in K blocks
/// (sweep_tiles handles the edges).
template <class Micro, class A>
inline void float_tile(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a,
                       std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {
    using S = FloatTileShape<A>;
    if (n_a == 1) {
        sweep_tiles<Micro, 8, 1>(n, w, ws, n_w, a, as, n_a, y, ldy);
    } else if (n_a == 2) {
        sweep_tiles<Micro, 8, 2>(n, w, ws, n_w, a, as, n_a, y, ldy);
    } else if (Micro::kWeightBytes == 2 && static_cast<std::size_t>(n) * S::kRows * Micro::kWeightBytes <= kRowsInL1) {
        sweep_tiles<Micro, S::kRows, S::kToks, true>(n, w, ws, n_w, a, as, n_a, y, ldy);
    } else {
        sweep_k_blocks<Micro, S::kRows, S::kToks>(n, w, ws, n_w, a, as, n_a, y, ldy);
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

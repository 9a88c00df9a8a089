// The float kernels, written once with xsimd and instantiated per architecture by
// float_<isa>.cpp (AVX2+FMA, AVX-512, NEON). Semantics are those of the scalar twins in
// float_scalar.cpp (the test oracle); results may differ from them only by float rounding.
// Tails are run through a zero-padded lane buffer so every element sees the same vector
// arithmetic (a row's result does not depend on where it sits in a batch).
// Kernel bodies only, internal linkage (see x86_common-inl.hpp): include from ISA TUs alone.
#pragma once

// xsimd 8.1's complex loads leave a register "uninitialized" before inserting both halves, and
// GCC 12 warns (false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <xsimd/xsimd.hpp>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "kernels/attention.hpp"
#include "kernels/fp16.hpp"
#include "kernels/kv_grid.hpp"
#include "kernels/prefetch.hpp"

namespace ember::kernels {
namespace {

template <class A> using FB = xsimd::batch<float, A>;
template <class A> using UB = xsimd::batch<std::uint32_t, A>;
template <class A> constexpr std::int64_t kLanes = static_cast<std::int64_t>(FB<A>::size);

/// Loads min(left, lanes) floats, zeros after them.
template <class A>
inline FB<A> load_part(const float* p, std::int64_t left) {
    if (left >= kLanes<A>) return FB<A>::load_unaligned(p);
    alignas(64) float buf[kLanes<A>] = {};
    __builtin_memcpy(buf, p, static_cast<std::size_t>(left) * sizeof(float));
    return FB<A>::load_aligned(buf);
}
template <class A>
inline void store_part(float* p, FB<A> v, std::int64_t left) {
    if (left >= kLanes<A>) {
        v.store_unaligned(p);
        return;
    }
    alignas(64) float buf[kLanes<A>];
    v.store_aligned(buf);
    __builtin_memcpy(p, buf, static_cast<std::size_t>(left) * sizeof(float));
}

// --- 16-bit floats: lanes widened to fp32 (bf16 by a shift, fp16 by the ISA's converter) ------
/// One vector of 16-bit lanes at p through `widen` (which reads kLanes<A> of them); fewer than
/// kLanes<A> left: through a zero-padded copy, so a tail sees the same arithmetic.
template <class A, class Widen>
inline FB<A> widen_16bit(const std::uint16_t* p, std::int64_t left, Widen widen) {
    if (left >= kLanes<A>) return widen(p);
    alignas(64) std::uint16_t h[kLanes<A>] = {};
    __builtin_memcpy(h, p, static_cast<std::size_t>(left) * 2);
    return widen(h);
}

template <class A>
inline FB<A> widen_bf16(const std::uint16_t* p, std::int64_t left) {
    static_assert(kLanes<A> == 4 || kLanes<A> == 8 || kLanes<A> == 16, "no bf16 widening for this width");
    return widen_16bit<A>(p, left, [](const std::uint16_t* src) -> FB<A> {
#if defined(__AVX512F__)
        if constexpr (kLanes<A> == 16) {
            return _mm512_castsi512_ps(_mm512_slli_epi32(
                _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src))), 16));
        }
#endif
#if defined(__AVX2__)
        if constexpr (kLanes<A> == 8) {
            return _mm256_castsi256_ps(
                _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src))), 16));
        }
#endif
#if defined(__aarch64__)
        if constexpr (kLanes<A> == 4) {
            uint16x4_t raw;
            __builtin_memcpy(&raw, src, 8);
            return vreinterpretq_f32_u32(vshll_n_u16(raw, 16));
        }
#endif
        return FB<A>(0.0f);
    });
}

template <class A>
inline FB<A> widen_fp16(const std::uint16_t* p, std::int64_t left) {
    static_assert(kLanes<A> == 4 || kLanes<A> == 8 || kLanes<A> == 16, "no fp16 converter for this width");
    return widen_16bit<A>(p, left, [](const std::uint16_t* src) -> FB<A> {
#if defined(__AVX512F__)
        if constexpr (kLanes<A> == 16) return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
#endif
#if defined(__F16C__)
        if constexpr (kLanes<A> == 8) return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
#endif
#if defined(__aarch64__)
        if constexpr (kLanes<A> == 4) {
            uint16x4_t raw;
            __builtin_memcpy(&raw, src, 8);
            return vcvt_f32_f16(vreinterpret_f16_u16(raw));
        }
#endif
        return FB<A>(0.0f);
    });
}

/// n fp32 to bf16, round to nearest even, nan kept quiet (fp32_to_bf16).
template <class A>
inline void narrow_bf16(const float* x, std::uint16_t* y, std::int64_t n) {
    for (std::int64_t i = 0; i < n; i += kLanes<A>) {
        const std::int64_t left = n - i;
        const UB<A> u = xsimd::bitwise_cast<UB<A>>(load_part<A>(x + i, left));
        const UB<A> rounded = (u + (UB<A>(0x7fffu) + ((u >> 16) & UB<A>(1u)))) >> 16;
        const UB<A> nan = (u >> 16) | UB<A>(64u);
        // NaN when |u| > inf's bits: then 0x7f800000 - |u| wraps and its top bit is set. Integer
        // ops instead of xsimd::select, whose AVX-512BW form does not compile at -O0 (xsimd 8.1).
        const UB<A> is_nan = (UB<A>(0x7f800000u) - (u & UB<A>(0x7fffffffu))) >> 31;
        const UB<A> mask = UB<A>(0u) - is_nan;
        const UB<A> r = (nan & mask) | (rounded & ~mask);
        alignas(64) std::uint32_t buf[kLanes<A>];
        r.store_aligned(buf);
        const std::int64_t m = left < kLanes<A> ? left : kLanes<A>;
        for (std::int64_t j = 0; j < m; ++j) y[i + j] = static_cast<std::uint16_t>(buf[j]);
    }
}

template <class A>
inline void widen_fp16_row(const std::uint16_t* h, float* y, std::int64_t n) {
    for (std::int64_t i = 0; i < n; i += kLanes<A>) store_part<A>(y + i, widen_fp16<A>(h + i, n - i), n - i);
}
template <class A>
inline void widen_bf16_row(const std::uint16_t* h, float* y, std::int64_t n) {
    for (std::int64_t i = 0; i < n; i += kLanes<A>) store_part<A>(y + i, widen_bf16<A>(h + i, n - i), n - i);
}

// --- Normalization, activations, residuals ---------------------------------------------------
/// Sum of squares in double lanes (ggml sums x*x in double), then x * scale * w in float.
template <class A>
inline void rmsnorm(float* out, const float* x, const float* w, std::int64_t n, float eps) {
    using DB = xsimd::batch<double, A>;
    constexpr std::int64_t kD = static_cast<std::int64_t>(DB::size);
    DB acc(0.0);
    std::int64_t i = 0;
    for (; i + kD <= n; i += kD) {
        alignas(64) double sq[kD];
        for (std::int64_t j = 0; j < kD; ++j) sq[j] = static_cast<double>(x[i + j] * x[i + j]);
        acc += DB::load_aligned(sq);
    }
    double sum = xsimd::hadd(acc);
    for (; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const FB<A> scale(1.0f / std::sqrt(mean + eps));
    for (i = 0; i < n; i += kLanes<A>) {
        store_part<A>(out + i, (load_part<A>(x + i, n - i) * scale) * load_part<A>(w + i, n - i), n - i);
    }
}

/// out = silu(gate) * up = gate / (1 + exp(-gate)) * up.
template <class A>
inline void swiglu(float* out, const float* gate, const float* up, std::int64_t n) {
    const FB<A> one(1.0f);
    for (std::int64_t i = 0; i < n; i += kLanes<A>) {
        const FB<A> g = load_part<A>(gate + i, n - i);
        store_part<A>(out + i, g / (one + xsimd::exp(-g)) * load_part<A>(up + i, n - i), n - i);
    }
}

/// out = gelu(gate) * up, GELU in its tanh form: 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
template <class A>
inline void geglu(float* out, const float* gate, const float* up, std::int64_t n) {
    const FB<A> half(0.5f), one(1.0f), c(0.7978845608028654f), k(0.044715f);
    for (std::int64_t i = 0; i < n; i += kLanes<A>) {
        const FB<A> g = load_part<A>(gate + i, n - i);
        const FB<A> inner = c * (g + k * g * g * g);
        store_part<A>(out + i, half * g * (one + xsimd::tanh(inner)) * load_part<A>(up + i, n - i), n - i);
    }
}

/// y += x.
template <class A>
inline void add(float* y, const float* x, std::int64_t n) {
    for (std::int64_t i = 0; i < n; i += kLanes<A>) {
        store_part<A>(y + i, load_part<A>(y + i, n - i) + load_part<A>(x + i, n - i), n - i);
    }
}

// --- RoPE: a pair (x0, x1) times the unit complex number (cos, sin) ----------------------------
/// Rotates n pairs. Normal layout: pair i is (v[2i], v[2i+1]); NEOX: (v[i], v[i + n]). cs holds
/// (cos, sin) of pair i at cs[2i], cs[2i+1].
template <class A>
inline void rope_pairs(float* v, std::int64_t n, const float* cs, bool neox) {
    using CB = xsimd::batch<std::complex<float>, A>;
    constexpr std::int64_t kC = static_cast<std::int64_t>(CB::size);
    const auto* ccs = reinterpret_cast<const std::complex<float>*>(cs);
    std::int64_t i = 0;
    for (; i + kC <= n; i += kC) {
        const CB r = CB::load_unaligned(ccs + i);
        if (neox) {
            const CB x = CB::load_unaligned(v + i, v + n + i);
            (x * r).store_unaligned(v + i, v + n + i);
        } else {
            auto* cv = reinterpret_cast<std::complex<float>*>(v);
            (CB::load_unaligned(cv + i) * r).store_unaligned(cv + i);
        }
    }
    if (i < n) {  // fewer than a batch of pairs left: the same products on zero-padded lanes
        const std::int64_t m = n - i;
        alignas(64) float xb[2 * kC] = {}, rb[2 * kC] = {};
        for (std::int64_t j = 0; j < m; ++j) {
            xb[2 * j] = neox ? v[i + j] : v[2 * (i + j)];
            xb[2 * j + 1] = neox ? v[n + i + j] : v[2 * (i + j) + 1];
            rb[2 * j] = cs[2 * (i + j)];
            rb[2 * j + 1] = cs[2 * (i + j) + 1];
        }
        auto* cx = reinterpret_cast<std::complex<float>*>(xb);
        (CB::load_aligned(cx) * CB::load_aligned(reinterpret_cast<const std::complex<float>*>(rb))).store_aligned(cx);
        for (std::int64_t j = 0; j < m; ++j) {
            (neox ? v[i + j] : v[2 * (i + j)]) = xb[2 * j];
            (neox ? v[n + i + j] : v[2 * (i + j) + 1]) = xb[2 * j + 1];
        }
    }
}

template <class A>
inline void rope(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,
                 const float* cs, bool neox) {
    for (std::int64_t h = 0; h < n_heads; ++h) rope_pairs<A>(x + h * head_dim, n_rot / 2, cs, neox);
}

// --- Attention over a paged KV cache (kernels/attention.hpp) --------------------------------
/// s[t] = exp(s[t] - max) in place for t < n; returns the sum (float lanes).
template <class A>
inline float softmax_numerator(float* s, std::int64_t n) {
    // The max over whole vectors, then their lanes and the tail: the same value as a scalar
    // scan (a max does not round), without its chain of dependent compares (3-4 cycles a score).
    constexpr std::int64_t L = kLanes<A>;
    FB<A> vmax(-INFINITY);
    std::int64_t t_max = 0;
    for (; t_max + L <= n; t_max += L) vmax = xsimd::max(vmax, FB<A>::load_unaligned(s + t_max));
    alignas(64) float lanes[L];
    vmax.store_aligned(lanes);
    float mx = -INFINITY;
    for (std::int64_t j = 0; j < L; ++j) mx = lanes[j] > mx ? lanes[j] : mx;
    for (std::int64_t t = t_max; t < n; ++t) mx = s[t] > mx ? s[t] : mx;
    const FB<A> vmx(mx);
    FB<A> sum(0.0f);
    for (std::int64_t t = 0; t < n; t += kLanes<A>) {
        const std::int64_t left = n - t;
        FB<A> e = xsimd::exp(load_part<A>(s + t, left) - vmx);
        if (left < kLanes<A>) {  // padding lanes hold exp(0 - max): keep them out of the sum
            alignas(64) float buf[kLanes<A>];
            e.store_aligned(buf);
            for (std::int64_t j = left; j < kLanes<A>; ++j) buf[j] = 0.0f;
            e = FB<A>::load_aligned(buf);
        }
        store_part<A>(s + t, e, left);
        sum += e;
    }
    return xsimd::hadd(sum);
}

/// Lanes of int8 values widened to float (min(left, lanes) of them, zeros after).
template <class A>
inline FB<A> widen_i8(const std::int8_t* p, std::int64_t left) {
#if defined(__AVX512F__)
    if constexpr (kLanes<A> == 16) {
        if (left >= 16) return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    }
#endif
#if defined(__AVX2__)
    if constexpr (kLanes<A> == 8) {
        if (left >= 8) return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
    }
#endif
    alignas(64) float buf[kLanes<A>] = {};
    const std::int64_t m = left < kLanes<A> ? left : kLanes<A>;
    for (std::int64_t j = 0; j < m; ++j) buf[j] = static_cast<float>(p[j]);
    return FB<A>::load_aligned(buf);
}

/// An fp16 value in every lane.
template <class A>
inline FB<A> broadcast_fp16(std::uint16_t h) {
#if defined(__AVX512F__)
    if constexpr (kLanes<A> == 16) return _mm512_cvtph_ps(_mm256_set1_epi16(static_cast<short>(h)));
#endif
#if defined(__F16C__)
    if constexpr (kLanes<A> == 8) return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(h)));
#endif
    return FB<A>(fp16_to_fp32(h));
}

/// Bytes of a Q8_0 block of values: its fp16 scale, then 32 quants.
constexpr std::size_t kQ8Block = 2 + 32;

/// Values [i, i + lanes) of a position's value slab stored as `T` (0: F32, 1: F16, 2: Q8_0: one
/// block), left of them in the slab. A Q8_0 chunk never straddles two blocks (lanes divide 32).
template <class A, int T>
inline FB<A> load_kv(const std::uint8_t* slab, std::int64_t i, std::int64_t left) {
    if constexpr (T == 0) {
        return left >= kLanes<A> ? FB<A>::load_unaligned(reinterpret_cast<const float*>(slab) + i)
                                 : load_part<A>(reinterpret_cast<const float*>(slab) + i, left);
    } else if constexpr (T == 1) {
        return widen_fp16<A>(reinterpret_cast<const std::uint16_t*>(slab) + i, left);
    } else {
        static_assert(32 % kLanes<A> == 0, "a Q8_0 chunk must not straddle blocks");
        const std::uint8_t* blk = slab + static_cast<std::size_t>(i / 32) * kQ8Block;
        std::uint16_t d;
        __builtin_memcpy(&d, blk, 2);
        return widen_i8<A>(reinterpret_cast<const std::int8_t*>(blk + 2 + i % 32), left) * broadcast_fp16<A>(d);
    }
}

/// Dim d of keys [at, at + n) of a key grid of `block` positions (n <= lanes) as floats: F32
/// loaded, F16 widened, Q8_0 quants widened times `scale` (their block's scales, widened by the
/// caller once per 32 dims: value = d * q as the row's dequantization computes it).
template <class A, int T>
inline FB<A> key_dim(const std::uint8_t* grid, std::int64_t at, std::int64_t block, std::int64_t d, std::int64_t n,
                     const FB<A>& scale) {
    const std::uint8_t* p = grid + grid_at(d, at, block, kGridElement<T>);
    if constexpr (T == 0) {
        return n == kLanes<A> ? FB<A>::load_unaligned(reinterpret_cast<const float*>(p))
                              : load_part<A>(reinterpret_cast<const float*>(p), n);
    } else if constexpr (T == 1) {
        return widen_fp16<A>(reinterpret_cast<const std::uint16_t*>(p), n);
    } else {
        return widen_i8<A>(reinterpret_cast<const std::int8_t*>(p), n) * scale;
    }
}

/// Keys [at, at + n) of a key grid of `block` positions, the first of them key t of the scores.
/// `ahead`: dim 0 of the keys a few pages on that score_tiles prefetches dim by dim as it goes
/// (dim d at ahead + d * block elements; the tile's own keys where there are none).
struct KeyTile {
    const std::uint8_t* grid;
    std::int64_t at, block, n, t;
    const std::uint8_t* ahead;
};

/// Scores of NQ queries against NT tiles of keys (kFull: of lanes keys each, else one of n <=
/// lanes): scale * dot(q_j, K[u]) at dst + j * dst_stride + tile.t + u, the queries transposed
/// (qT[d * NQ + j]). Each dot is one chain of FMAs over the dims from 0 in its own lane: the same
/// bits for any NQ, NT, tiling and ISA. Two tiles give twice the independent chains, enough to
/// cover the FMA's latency. Each dim's step also prefetches that dim of each tile's `ahead` keys.
/// Not inlined: on its own GCC 12 keeps every accumulator in a register.
template <class A, int T, int NQ, int NT, bool kFull>
[[gnu::noinline]] void score_tiles(const float* qT, const KeyTile* tiles, std::int64_t hd, float scale, float* dst,
                                   std::int64_t dst_stride) {
    static_assert(kFull || NT == 1, "a partial tile comes alone");
    constexpr std::int64_t L = kLanes<A>;
    const std::int64_t n = kFull ? L : tiles[0].n;
    const std::uint8_t* grid[NT];
    const std::uint8_t* ahead[NT];
    std::int64_t at[NT], block[NT];
    std::size_t dim_bytes[NT];
#pragma GCC unroll 2
    for (int tt = 0; tt < NT; ++tt) {
        grid[tt] = tiles[tt].grid;
        at[tt] = tiles[tt].at;
        block[tt] = tiles[tt].block;
        ahead[tt] = tiles[tt].ahead;
        dim_bytes[tt] = static_cast<std::size_t>(block[tt]) * kGridElement<T>;
    }
    // Dims whose rows share a line (F16 and Q8_0 pages of 16 positions) prefetch it once.
    const std::int64_t same_line = dim_bytes[0] < 64 && 64 % dim_bytes[0] == 0 ? static_cast<std::int64_t>(64 / dim_bytes[0]) - 1 : 0;
    FB<A> acc[NT][NQ];
#pragma GCC unroll 2
    for (int tt = 0; tt < NT; ++tt) {
#pragma GCC unroll 8
        for (int j = 0; j < NQ; ++j) acc[tt][j] = FB<A>(0.0f);
    }
    // Dims [d0, d1) times scales `sc` (Q8_0: one block's, per tile).
    const auto dims = [&](std::int64_t d0, std::int64_t d1, const FB<A>* sc) __attribute__((always_inline)) {
        for (std::int64_t d = d0; d < d1; ++d) {
            FB<A> k[NT];
#pragma GCC unroll 2
            for (int tt = 0; tt < NT; ++tt) {
                if ((d & same_line) == 0) prefetch_line(ahead[tt] + static_cast<std::size_t>(d) * dim_bytes[tt]);
                k[tt] = key_dim<A, T>(grid[tt], at[tt], block[tt], d, n, sc[tt]);
            }
#pragma GCC unroll 8
            for (int j = 0; j < NQ; ++j) {
                const FB<A> qd(qT[d * NQ + j]);
#pragma GCC unroll 2
                for (int tt = 0; tt < NT; ++tt) acc[tt][j] = xsimd::fma(qd, k[tt], acc[tt][j]);
            }
        }
    };
    if constexpr (T == 2) {
        for (std::int64_t b = 0; b < hd / 32; ++b) {
            FB<A> sc[NT];
#pragma GCC unroll 2
            for (int tt = 0; tt < NT; ++tt) {
                const std::uint8_t* scales = grid[tt] + grid_scale_at(hd, b * 32, at[tt], block[tt]);
                sc[tt] = widen_fp16<A>(reinterpret_cast<const std::uint16_t*>(scales), n);
            }
            dims(b * 32, b * 32 + 32, sc);
        }
    } else {
        const FB<A> sc[NT] = {};
        dims(0, hd, sc);
    }
#pragma GCC unroll 2
    for (int tt = 0; tt < NT; ++tt) {
#pragma GCC unroll 8
        for (int j = 0; j < NQ; ++j) {
            float* dj = dst + j * dst_stride + tiles[tt].t;
            if constexpr (kFull) {
                (acc[tt][j] * FB<A>(scale)).store_unaligned(dj);
            } else {
                store_part<A>(dj, acc[tt][j] * FB<A>(scale), n);
            }
        }
    }
}

/// Prefetches the lines of [from, to). A decode step streams the weights between two layers'
/// attention, so the KV cache is out of the caches and each pass prefetches the runs it reads
/// some runs ahead. On Zen 5 (in a VM at least) the first prefetch into a 4 KiB page the
/// translation caches lack fetched little: the passes also prefetch a line of the run after
/// those (the key grid's first, each value row's first), a step before its other lines go
/// out, which primes its pages. That measured faster than loading a byte of each new page (the
/// loads wait for memory) and than prefetching all lines a run further ahead. The span's last
/// line goes out again even where the loop took it: each line once measured slower in decode.
inline void prefetch_lines(const std::uint8_t* from, const std::uint8_t* to) noexcept {
    for (const std::uint8_t* p = from; p < to; p += 64) prefetch_line(p);
    prefetch_line(to - 1);
}

/// Scores of NQ queries of one row (query j at q + j * hd) against its keys [t_lo, t_hi): scale *
/// dot(q_j, K[t]) at dst + j * dst_stride + t. The keys go in tiles of up to lanes positions from
/// t_lo on, two whole tiles a call where 2 * NQ accumulators fit kRegs; `qT` holds NQ * hd floats.
template <class A, int T, int NQ, int kRegs>
void score_span(const float* q, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, std::int64_t t_lo,
                std::int64_t t_hi, float scale, float* qT, float* dst, std::int64_t dst_stride) {
    constexpr std::int64_t L = kLanes<A>;
    constexpr bool kPairs = 2 * NQ <= kRegs;
    for (std::int64_t d = 0; d < hd; ++d) {
        for (int j = 0; j < NQ; ++j) qT[d * NQ + j] = q[j * hd + d];
    }
    // The keys kAhead runs (pages) on are prefetched while a run is computed: each tile's dims
    // one per step of its FMAs (score_tiles), from the same place in that run. Prefetching a
    // run's lines all at once, as the values do, stalled the FMAs on the full miss buffers: the
    // decode score pass at depth 4096 read 25 GB/s that way, 45 spread. The first line of the
    // run after those primes its page (prefetch_lines).
    constexpr int kAhead = 2;
    constexpr std::size_t kElement = kGridElement<T>;
    // Where dim d of key u of run r lies.
    const auto key_at = [&](const KvRun& r, std::int64_t u, std::int64_t d = 0) {
        return r.k + grid_at(d, r.first + u, r.block, kElement);
    };
    const auto prefetch_keys = [&](const KvRun& r) {  // dims whose rows share lines: the grid's span
        if (static_cast<std::size_t>(r.block) * kElement <= 64) {
            prefetch_lines(key_at(r, 0), key_at(r, r.n, hd - 1));
        } else {
            for (std::int64_t d = 0; d < hd; ++d) prefetch_lines(key_at(r, 0, d), key_at(r, r.n, d));
        }
    };
    const auto prefetch_scales = [&](const KvRun& r) {  // Q8_0's block scales, after the quants
        if constexpr (T == 2) {
            prefetch_lines(r.k + grid_scale_at(hd, 0, r.first, r.block), r.k + grid_scale_at(hd, hd - 1, r.first + r.n, r.block));
        }
    };
    KeyTile pending[2];
    int n_pending = 0;
    std::int64_t ri = 0, t0 = 0;
    for (; ri < n_runs && t0 + runs[ri].n <= t_lo; ++ri) t0 += runs[ri].n;  // runs before the span
    for (std::int64_t i = ri + 1; i < ri + kAhead && i < n_runs; ++i) {
        prefetch_keys(runs[i]);
        prefetch_scales(runs[i]);
    }
    for (; ri < n_runs && t0 < t_hi; t0 += runs[ri++].n) {
        const KvRun* later = ri + kAhead < n_runs ? &runs[ri + kAhead] : nullptr;
        if (later != nullptr) prefetch_scales(*later);
        if (ri + kAhead + 1 < n_runs) prefetch_line(key_at(runs[ri + kAhead + 1], 0));
        const KvRun& run = runs[ri];
        const std::int64_t u_hi = t_hi - t0 < run.n ? t_hi - t0 : run.n;
        for (std::int64_t u = t_lo > t0 ? t_lo - t0 : 0; u < u_hi; u += L) {
            const KeyTile tile{run.k, run.first + u, run.block, u_hi - u < L ? u_hi - u : L, t0 + u,
                               later != nullptr && u < later->n && later->block == run.block ? key_at(*later, u) : key_at(run, u)};
            if (tile.n < L) {
                score_tiles<A, T, NQ, 1, false>(qT, &tile, hd, scale, dst, dst_stride);
            } else if (!kPairs) {
                score_tiles<A, T, NQ, 1, true>(qT, &tile, hd, scale, dst, dst_stride);
            } else {
                pending[n_pending++] = tile;
                if (n_pending == 2) {
                    score_tiles<A, T, NQ, kPairs ? 2 : 1, true>(qT, pending, hd, scale, dst, dst_stride);
                    n_pending = 0;
                }
            }
        }
    }
    if (n_pending == 1) score_tiles<A, T, NQ, 1, true>(qT, pending, hd, scale, dst, dst_stride);
}

/// What value_span does with the part of a head it sums: where its accumulators start (zero or
/// the partial sums at out) and where they end (out, as partial sums or scaled by inv).
struct ValuePart {
    bool first, last;
    bool prefetch;            // prefetch value slabs [s0, s1) of runs ahead
    std::int64_t s0, s1;
    std::int64_t run, key;    // a run at or before the one holding t_lo, and its first key
};

/// Lanes [i0, i0 + CC * lanes) (CC = 0: [i0, i0 + left)) of the outputs of NQ queries of one
/// row, out_j = inv_j * sum over its keys t in [t_lo, t_hi), in order, of p_j[t] * V[t]: query
/// j's scores at p + j * p_stride (indexed by key), its output at out + j * hd. Each output lane
/// is one FMA chain over the keys from 0, whatever NQ, CC and the runs: the same bits for a query
/// alone or in a block. The accumulators stay in registers over [t_lo, t_hi), and each value is
/// widened once per pass, as it is loaded; a longer span goes in parts (ValuePart) that carry
/// the partial sums through out, which is exact. A pass reads the slabs of its lanes (one, or
/// two where CC * lanes = 64), each a run's positions one after another. Not inlined, for the
/// registers (as score_tiles).
template <class A, int T, int NQ, int CC>
[[gnu::noinline]] void value_span(const float* p, std::int64_t p_stride, const KvRun* runs, std::int64_t n_runs,
                                  std::int64_t t_lo, std::int64_t t_hi, std::int64_t i0, std::int64_t left,
                                  std::int64_t hd, const float* inv, float* out, const ValuePart& part) {
    constexpr std::int64_t L = kLanes<A>;
    constexpr int NC = CC > 0 ? CC : 1;
    constexpr int kAhead = 2;  // runs whose slabs are prefetched ahead; the next one is primed (prefetch_lines)
    const std::int64_t w = slab_values(hd);
    const std::size_t sb = slab_bytes<T>(hd);
    // Where slab s of a run's position u0 lies.
    const auto slab_span = [&](const KvRun& r, std::int64_t s, std::int64_t u0) {
        return r.v + slab_at(s, r.first + u0, r.block, sb);
    };
    const auto prefetch_run = [&](const KvRun& r) {
        for (std::int64_t s = part.s0; s < part.s1; ++s) prefetch_lines(slab_span(r, s, 0), slab_span(r, s, r.n));
    };
    const auto prime_run = [&](const KvRun& r) {
        for (std::int64_t s = part.s0; s < part.s1; ++s) prefetch_line(slab_span(r, s, 0));
    };
    // Vector c's slab and its first value there.
    std::int64_t slab_of[NC], at_of[NC];
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
        slab_of[c] = (i0 + c * L) / w;
        at_of[c] = (i0 + c * L) % w;
    }
    FB<A> acc[NQ][NC];
#pragma GCC unroll 8
    for (int j = 0; j < NQ; ++j) {
#pragma GCC unroll 8
        for (int c = 0; c < NC; ++c) {
            const float* src = out + j * hd + i0 + c * L;
            if (part.first) {
                acc[j][c] = FB<A>(0.0f);
            } else if constexpr (CC > 0) {
                acc[j][c] = FB<A>::load_unaligned(src);
            } else {
                acc[j][c] = load_part<A>(src, left);
            }
        }
    }
    std::int64_t ri = part.run, t0 = part.key;
    for (; ri < n_runs && t0 + runs[ri].n <= t_lo; ++ri) t0 += runs[ri].n;  // runs before the span
    if (part.prefetch) {
        for (std::int64_t i = ri + 1; i < ri + kAhead && i < n_runs; ++i) prefetch_run(runs[i]);
    }
    for (; ri < n_runs && t0 < t_hi; t0 += runs[ri++].n) {
        const KvRun& run = runs[ri];
        if (part.prefetch && ri + kAhead < n_runs) prefetch_run(runs[ri + kAhead]);
        if (part.prefetch && ri + kAhead + 1 < n_runs) prime_run(runs[ri + kAhead + 1]);
        const std::int64_t u_lo = t_lo > t0 ? t_lo - t0 : 0, u_hi = t_hi - t0 < run.n ? t_hi - t0 : run.n;
        std::size_t from_first[NC];  // vector c's slab of a position from slab 0's
#pragma GCC unroll 8
        for (int c = 0; c < NC; ++c) from_first[c] = slab_at(slab_of[c], 0, run.block, sb);
        const std::uint8_t* at = slab_span(run, 0, u_lo);
        const float* pu = p + t0;
        for (std::int64_t u = u_lo; u < u_hi; ++u, at += sb) {
#pragma GCC unroll 8
            for (int c = 0; c < NC; ++c) {
                const FB<A> v = load_kv<A, T>(at + from_first[c], at_of[c], CC > 0 ? L : left);
#pragma GCC unroll 8
                for (int j = 0; j < NQ; ++j) acc[j][c] = xsimd::fma(FB<A>(pu[j * p_stride + u]), v, acc[j][c]);
            }
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < NQ; ++j) {
#pragma GCC unroll 8
        for (int c = 0; c < NC; ++c) {
            const FB<A> o = part.last ? acc[j][c] * FB<A>(inv[j]) : acc[j][c];
            float* dst = out + j * hd + i0 + c * L;
            if constexpr (CC > 0) {
                o.store_unaligned(dst);
            } else {
                store_part<A>(dst, o, left);
            }
        }
    }
}

/// attend_kv for heads of C whole vectors (C = 0: any hd). Per row, its queries in groups of up
/// to 8 stream their keys (score_span) and then their values (value_span), each key dim and
/// value widened once for the group's FMAs; the arithmetic per query does not change.
template <class A, int T, int C>
inline void attend_kv_heads(const AttendQueries& qs, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                            float scale, float softcap, float* scratch) {
    constexpr std::int64_t L = kLanes<A>;
    // Accumulator registers a group may hold (of 32 on AVX-512 and NEON, 16 on AVX2).
#if defined(__aarch64__)
    constexpr int kRegs = 16;
#else
    constexpr int kRegs = L >= 16 ? 16 : 8;
#endif
    const std::int64_t n_queries = qs.n_rows * qs.n_q;
    const auto start = [&](std::int64_t r) { return qs.start ? qs.start[r] : std::int64_t{0}; };
    std::int64_t n_keys = 0;  // the keys any row reads; a query's scores sit at its keys' indexes
    for (std::int64_t r = 0; r < qs.n_rows; ++r) n_keys = start(r) + qs.n_pos[r] > n_keys ? start(r) + qs.n_pos[r] : n_keys;
    float* inv_sum = scratch + n_queries * n_keys;
    const auto q_of = [&](std::int64_t qi) { return qs.q + (qi / qs.n_q) * qs.stride + (qi % qs.n_q) * hd; };
    const auto out_of = [&](std::int64_t qi) { return qs.out + (qi / qs.n_q) * qs.stride + (qi % qs.n_q) * hd; };
    // Per row, its queries in groups of up to 8: fn(row, first query, NQ as a constant).
    const auto for_groups = [&](auto&& fn) {
        for (std::int64_t r = 0; r < qs.n_rows; ++r) {
            for (std::int64_t j0 = 0; j0 < qs.n_q;) {
                std::int64_t nq = 8;
                while (nq > qs.n_q - j0) nq /= 2;
                const std::int64_t qi = r * qs.n_q + j0;
                switch (nq) {
                    case 8: fn(r, qi, std::integral_constant<int, 8>{}); break;
                    case 4: fn(r, qi, std::integral_constant<int, 4>{}); break;
                    case 2: fn(r, qi, std::integral_constant<int, 2>{}); break;
                    default: fn(r, qi, std::integral_constant<int, 1>{}); break;
                }
                j0 += nq;
            }
        }
    };
    // Scores: a key dim widened once for a group's FMAs (decode: one group per key/value head).
    float* qT = inv_sum + n_queries;  // attend_scratch_floats' last 8 * hd floats
    for_groups([&](std::int64_t r, std::int64_t qi, auto nq_c) {
        constexpr int NQ = decltype(nq_c)::value;
        score_span<A, T, NQ, kRegs>(q_of(qi), hd, runs, n_runs, start(r), start(r) + qs.n_pos[r], scale, qT,
                                    scratch + qi * n_keys, n_keys);
    });
    // Softmax, then each output summed over its keys in order: per row, groups of up to 8 of its
    // queries, each pass over the values covering as many of the head's vectors as keep the
    // group's accumulators within kRegs.
    const float inv_cap = softcap > 0.0f ? 1.0f / softcap : 0.0f;
    for (std::int64_t qi = 0; qi < n_queries; ++qi) {
        const std::int64_t r = qi / qs.n_q, n_pos = qs.n_pos[r];
        float* s = scratch + qi * n_keys + start(r);
        if (softcap > 0.0f) {
            for (std::int64_t t = 0; t < n_pos; ++t) s[t] = std::tanh(s[t] * inv_cap) * softcap;
        }
        inv_sum[qi] = 1.0f / softmax_numerator<A>(s, n_pos);
    }
    // Where a head takes more than four passes (8 on AVX2 and NEON at hd 64, on AVX-512 at 256),
    // the keys go in parts of kPartKeys, all passes over one part before the next: the first
    // pass brings the part's value rows into L2 (prefetching the whole head part of each) and
    // the others find them there, where each pass over a deep cache's keys had read them from
    // L3 or memory again. With 2 or 4 passes (AVX-512 at 64 and 128) parts measured slower.
    constexpr int kVectors = C > 0 ? C : 1;  // a head's vectors (C = 0: chunks, the last partial)
    constexpr std::int64_t kPartKeys = 256;
    const std::int64_t w = slab_values(hd), n_slabs = hd / w;
    for_groups([&](std::int64_t r, std::int64_t qi, auto nq_c) {
        constexpr int NQ = decltype(nq_c)::value;
        constexpr int CC = C == 0 ? 0 : kVectors < kRegs / NQ ? kVectors : static_cast<int>(kRegs / NQ);
        constexpr std::int64_t kStep = (CC > 0 ? CC : 1) * L;
        const std::int64_t t_lo = start(r), t_hi = start(r) + qs.n_pos[r];
        const bool in_parts = hd > 4 * kStep;
        const std::int64_t part_keys = in_parts ? kPartKeys : t_hi - t_lo;
        std::int64_t ri = 0, t0 = 0;  // the run holding k0, and its first key
        for (std::int64_t k0 = t_lo; k0 < t_hi; k0 += part_keys) {
            const std::int64_t k1 = t_hi - k0 < part_keys ? t_hi : k0 + part_keys;
            for (; ri < n_runs && t0 + runs[ri].n <= k0; ++ri) t0 += runs[ri].n;
            for (std::int64_t i0 = 0; i0 < hd; i0 += kStep) {
                const std::int64_t i1 = hd - i0 < kStep ? hd : i0 + kStep;
                const ValuePart part = in_parts ? ValuePart{k0 == t_lo, k1 == t_hi, i0 == 0, 0, n_slabs, ri, t0}
                                                : ValuePart{true, true, true, i0 / w, (i1 - 1) / w + 1, 0, 0};
                value_span<A, T, NQ, CC>(scratch + qi * n_keys, n_keys, runs, n_runs, k0, k1, i0, hd - i0, hd,
                                         inv_sum + qi, out_of(qi), part);
            }
        }
    });
}

template <class A, int T>
inline void attend_kv(const AttendQueries& qs, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                      float scale, float softcap, float* scratch) {
    constexpr std::int64_t L = kLanes<A>;
    switch (hd % L == 0 ? hd / L : 0) {
        case 1: return attend_kv_heads<A, T, 1>(qs, hd, runs, n_runs, scale, softcap, scratch);
        case 2: return attend_kv_heads<A, T, 2>(qs, hd, runs, n_runs, scale, softcap, scratch);
        case 4: return attend_kv_heads<A, T, 4>(qs, hd, runs, n_runs, scale, softcap, scratch);
        case 8: return attend_kv_heads<A, T, 8>(qs, hd, runs, n_runs, scale, softcap, scratch);
        case 16: return attend_kv_heads<A, T, 16>(qs, hd, runs, n_runs, scale, softcap, scratch);
        default: return attend_kv_heads<A, T, 0>(qs, hd, runs, n_runs, scale, softcap, scratch);
    }
}

}  // namespace
}  // namespace ember::kernels

/// Defines the float kernels of the enclosing ISA namespace for xsimd architecture `Arch` (the
/// float-weight dot products and tiles: EMBER_FLOAT_GEMM_EXPORTS in float_gemm-inl.hpp).
#define EMBER_FLOAT_EXPORTS(Arch)                                                                   \
    void quantize_act_bf16(const float* x, void* dst, std::int64_t n) {                             \
        narrow_bf16<Arch>(x, static_cast<std::uint16_t*>(dst), n);                                   \
    }                                                                                               \
    void dequantize_f16(const void* src, float* dst, std::int64_t n) {                              \
        widen_fp16_row<Arch>(static_cast<const std::uint16_t*>(src), dst, n);                        \
    }                                                                                               \
    void dequantize_bf16(const void* src, float* dst, std::int64_t n) {                             \
        widen_bf16_row<Arch>(static_cast<const std::uint16_t*>(src), dst, n);                        \
    }                                                                                               \
    void rmsnorm(float* out, const float* x, const float* w, std::int64_t n, float eps) {           \
        ::ember::kernels::rmsnorm<Arch>(out, x, w, n, eps);                                         \
    }                                                                                               \
    void swiglu(float* out, const float* g, const float* u, std::int64_t n) { ::ember::kernels::swiglu<Arch>(out, g, u, n); } \
    void geglu(float* out, const float* g, const float* u, std::int64_t n) { ::ember::kernels::geglu<Arch>(out, g, u, n); } \
    void add(float* y, const float* x, std::int64_t n) { ::ember::kernels::add<Arch>(y, x, n); }     \
    void rope(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot, const float* cs, bool neox) { \
        ::ember::kernels::rope<Arch>(x, n_heads, head_dim, n_rot, cs, neox);                        \
    }                                                                                               \
    void attend_f32(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, \
                    float scale, float softcap, float* scratch) {                                  \
        ::ember::kernels::attend_kv<Arch, 0>(queries, hd, runs, n_runs, scale, softcap, scratch);            \
    }                                                                                               \
    void attend_f16(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, \
                    float scale, float softcap, float* scratch) {                                  \
        ::ember::kernels::attend_kv<Arch, 1>(queries, hd, runs, n_runs, scale, softcap, scratch);            \
    }                                                                                               \
    void attend_q8_0(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, \
                     float scale, float softcap, float* scratch) {                                 \
        ::ember::kernels::attend_kv<Arch, 2>(queries, hd, runs, n_runs, scale, softcap, scratch);            \
    }

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

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "kernels/attention.hpp"

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

/// Values [i, i + lanes) of one head's row stored as `T` (0: F32, 1: F16, 2: Q8_0), left of them
/// in the row. A Q8_0 chunk never straddles two blocks (lanes divide 32).
template <class A, int T>
inline FB<A> load_kv(const std::uint8_t* row, std::int64_t i, std::int64_t left) {
    if constexpr (T == 0) {
        return load_part<A>(reinterpret_cast<const float*>(row) + i, left);
    } else if constexpr (T == 1) {
        return widen_fp16<A>(reinterpret_cast<const std::uint16_t*>(row) + i, left);
    } else {
        static_assert(32 % kLanes<A> == 0, "a Q8_0 chunk must not straddle blocks");
        const std::uint8_t* blk = row + (i / 32) * 34;
        alignas(64) std::uint16_t d[kLanes<A>];
        __builtin_memcpy(d, blk, 2);
        for (std::int64_t j = 1; j < kLanes<A>; ++j) d[j] = d[0];
        return widen_i8<A>(reinterpret_cast<const std::int8_t*>(blk + 2 + i % 32), left) * widen_fp16<A>(d, kLanes<A>);
    }
}

/// Lane u = the sum of rows[u]'s lanes (kLanes<A> rows). xsimd 8.1's haddp permutes the lanes
/// of its AVX-512 result (2-3 with 4-5, 10-11 with 12-13), so that width has its own tree.
template <class A>
inline FB<A> sum_each(const FB<A>* rows) {
#if defined(__AVX512F__)
    if constexpr (kLanes<A> == 16) {
        __m512 z[4];
        for (int j = 0; j < 4; ++j) {  // z[j]: per 128-bit chunk, partial sums of rows 4j..4j+3
            __m512 x[2];
            for (int h = 0; h < 2; ++h) {  // x[h]: [r0 lanes 0+2, r1 0+2, r0 1+3, r1 1+3] per chunk
                const __m512 a = rows[4 * j + 2 * h], b = rows[4 * j + 2 * h + 1];
                x[h] = _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
            }
            const __m512d x0 = _mm512_castps_pd(x[0]), x1 = _mm512_castps_pd(x[1]);
            z[j] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x0, x1)), _mm512_castpd_ps(_mm512_unpackhi_pd(x0, x1)));
        }
        const __m512 w0 = _mm512_add_ps(_mm512_shuffle_f32x4(z[0], z[1], _MM_SHUFFLE(1, 0, 1, 0)),
                                        _mm512_shuffle_f32x4(z[0], z[1], _MM_SHUFFLE(3, 2, 3, 2)));
        const __m512 w1 = _mm512_add_ps(_mm512_shuffle_f32x4(z[2], z[3], _MM_SHUFFLE(1, 0, 1, 0)),
                                        _mm512_shuffle_f32x4(z[2], z[3], _MM_SHUFFLE(3, 2, 3, 2)));
        return _mm512_add_ps(_mm512_shuffle_f32x4(w0, w1, _MM_SHUFFLE(2, 0, 2, 0)),
                             _mm512_shuffle_f32x4(w0, w1, _MM_SHUFFLE(3, 1, 3, 1)));
    }
#endif
    return xsimd::haddp(rows);
}

/// Walks the runs' keys in tiles of up to kLanes<A> keys: the K and V rows of the next tile.
class KvTiles {
public:
    KvTiles(const KvRun* runs, std::int64_t n_runs, std::size_t row_bytes) noexcept
        : runs_(runs), n_runs_(n_runs), row_bytes_(row_bytes) {}
    /// Fills k[u] / v[u] for the next min(max, keys left) keys; returns how many.
    std::int64_t next(std::int64_t max, const std::uint8_t** k, const std::uint8_t** v) noexcept {
        std::int64_t n = 0;
        while (n < max && run_ < n_runs_) {
            if (u_ == runs_[run_].n) {
                ++run_;
                u_ = 0;
                continue;
            }
            const std::size_t off = static_cast<std::size_t>(u_++) * row_bytes_;
            k[n] = runs_[run_].k + off;
            v[n++] = runs_[run_].v + off;
        }
        return n;
    }

private:
    const KvRun* runs_;
    std::int64_t n_runs_, run_ = 0, u_ = 0;
    std::size_t row_bytes_;
};

/// Rows of a tile as floats: F32 rows in place, others widened into `buf` (n rows of hd).
template <class A, int T>
inline void tile_rows(const std::uint8_t* const* rows, std::int64_t n, std::int64_t hd, float* buf, const float** out) {
    for (std::int64_t u = 0; u < n; ++u) {
        if constexpr (T == 0) {
            out[u] = reinterpret_cast<const float*>(rows[u]);
        } else {
            float* dst = buf + u * hd;
            for (std::int64_t i = 0; i < hd; i += kLanes<A>) store_part<A>(dst + i, load_kv<A, T>(rows[u], i, hd - i), hd - i);
            out[u] = dst;
        }
    }
}

/// Chunk i of a head: C > 0 means hd = C * lanes (whole vectors); C = 0 any hd (tail zeroed).
template <class A, int C>
inline FB<A> head_chunk(const float* p, std::int64_t i, std::int64_t hd) {
    if constexpr (C > 0) {
        return FB<A>::load_unaligned(p + i);
    } else {
        return load_part<A>(p + i, hd - i);
    }
}

/// Scores of NQ queries (heads of one row) against the tile's keys [lo, hi): lanes [lo, hi) of
/// scale * dot(q_j, K[u]) stored at dst[j] + lo. Each dot is a chain of FMAs over the head's
/// chunks in order then one transpose-reduce: the same bits for any C and NQ.
template <class A, int C, int NQ>
inline void score_tile(const float* const* q, const float* const* rows, std::int64_t lo, std::int64_t hi,
                       std::int64_t hd, float scale, float* const* dst) {
    constexpr std::int64_t L = kLanes<A>;
    const std::int64_t n_chunks = C > 0 ? C : (hd + L - 1) / L;
    FB<A> qv[NQ][C > 0 ? C : 1];  // the queries' chunks, held in registers
    if constexpr (C > 0) {
        for (int j = 0; j < NQ; ++j) {
            for (int c = 0; c < C; ++c) qv[j][c] = FB<A>::load_unaligned(q[j] + c * L);
        }
    }
    FB<A> dots[NQ][L];
    for (std::int64_t u = 0; u < L; ++u) {
        FB<A> acc[NQ];
        for (int j = 0; j < NQ; ++j) acc[j] = FB<A>(0.0f);
        if (u >= lo && u < hi) {
            for (std::int64_t c = 0; c < n_chunks; ++c) {
                const FB<A> k = head_chunk<A, C>(rows[u], c * L, hd);
                for (int j = 0; j < NQ; ++j) {
                    if constexpr (C > 0) {
                        acc[j] = xsimd::fma(qv[j][c], k, acc[j]);
                    } else {
                        acc[j] = xsimd::fma(load_part<A>(q[j] + c * L, hd - c * L), k, acc[j]);
                    }
                }
            }
        }
        for (int j = 0; j < NQ; ++j) dots[j][u] = acc[j];
    }
    for (int j = 0; j < NQ; ++j) {
        const FB<A> s = sum_each<A>(dots[j]) * FB<A>(scale);
        if (lo == 0) {
            store_part<A>(dst[j], s, hi);
        } else {
            alignas(64) float buf[L];
            s.store_aligned(buf);
            __builtin_memcpy(dst[j] + lo, buf + lo, static_cast<std::size_t>(hi - lo) * sizeof(float));
        }
    }
}

/// out_j += sum over the tile's keys u in [lo, hi), in order, of p_j[u] * V[u] (NQ queries of
/// one row): per output lane the same FMA sequence for any C and NQ.
template <class A, int C, int NQ>
inline void value_tile(const float* const* p, const float* const* rows, std::int64_t lo, std::int64_t hi,
                       std::int64_t hd, float* const* out) {
    constexpr std::int64_t L = kLanes<A>;
    if constexpr (C > 0) {
        FB<A> acc[NQ][C];
        for (int j = 0; j < NQ; ++j) {
            for (int c = 0; c < C; ++c) acc[j][c] = FB<A>::load_unaligned(out[j] + c * L);
        }
        for (std::int64_t u = lo; u < hi; ++u) {
            FB<A> w[NQ];
            for (int j = 0; j < NQ; ++j) w[j] = FB<A>(p[j][u]);
            for (int c = 0; c < C; ++c) {
                const FB<A> v = FB<A>::load_unaligned(rows[u] + c * L);
                for (int j = 0; j < NQ; ++j) acc[j][c] = xsimd::fma(w[j], v, acc[j][c]);
            }
        }
        for (int j = 0; j < NQ; ++j) {
            for (int c = 0; c < C; ++c) acc[j][c].store_unaligned(out[j] + c * L);
        }
    } else {
        for (int j = 0; j < NQ; ++j) {
            for (std::int64_t i = 0; i < hd; i += L) {
                FB<A> acc = load_part<A>(out[j] + i, hd - i);
                for (std::int64_t u = lo; u < hi; ++u) acc = xsimd::fma(FB<A>(p[j][u]), load_part<A>(rows[u] + i, hd - i), acc);
                store_part<A>(out[j] + i, acc, hd - i);
            }
        }
    }
}

/// attend_kv for heads of C whole vectors (C = 0: any hd). Queries go in groups of up to 4 of one
/// row's heads where the group's accumulators fit the registers (each key or value chunk loaded
/// once for the group); the arithmetic per query does not change.
template <class A, int T, int C>
inline void attend_kv_heads(const AttendQueries& qs, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                            std::size_t row_bytes, float scale, float softcap, float* scratch) {
    constexpr std::int64_t L = kLanes<A>;
    static_assert(L <= 16, "attend_scratch_floats holds tiles of at most 16 keys");
    constexpr std::int64_t kRegs = L >= 16 ? 16 : 8;  // accumulator registers a group may hold
    constexpr std::int64_t kGroup = C > 0 && 4 * C <= kRegs ? 4 : C > 0 && 2 * C <= kRegs ? 2 : 1;
    const std::int64_t n_queries = qs.n_rows * qs.n_q;
    const auto start = [&](std::int64_t r) { return qs.start ? qs.start[r] : std::int64_t{0}; };
    std::int64_t n_keys = 0;  // the keys any row reads; a query's scores sit at its keys' indexes
    for (std::int64_t r = 0; r < qs.n_rows; ++r) n_keys = start(r) + qs.n_pos[r] > n_keys ? start(r) + qs.n_pos[r] : n_keys;
    float* tile_buf = scratch + n_queries * n_keys;
    float* inv_sum = tile_buf + L * hd;
    const auto q_of = [&](std::int64_t qi) { return qs.q + (qi / qs.n_q) * qs.stride + (qi % qs.n_q) * hd; };
    const auto out_of = [&](std::int64_t qi) { return qs.out + (qi / qs.n_q) * qs.stride + (qi % qs.n_q) * hd; };
    // Calls fn(first query, queries (1, 2 or 4 of one row), lo, hi) for the queries that read the
    // tile at t0 of n keys, lanes [lo, hi) of it.
    const auto for_queries = [&](std::int64_t t0, std::int64_t n, auto&& fn) {
        for (std::int64_t qi = 0; qi < n_queries;) {
            const std::int64_t r = qi / qs.n_q;
            const std::int64_t left = (r + 1) * qs.n_q - qi;  // this row's queries from qi on
            const std::int64_t nq = left >= 4 && kGroup >= 4 ? 4 : left >= 2 && kGroup >= 2 ? 2 : 1;
            const std::int64_t lo = start(r) > t0 ? start(r) - t0 : 0;
            const std::int64_t hi = start(r) + qs.n_pos[r] - t0 < n ? start(r) + qs.n_pos[r] - t0 : n;
            if (hi > lo) fn(qi, nq, lo, hi);
            qi += nq;
        }
    };
    const std::uint8_t* k_rows[L];
    const std::uint8_t* v_rows[L];
    const float* rows[L];
    // The rows kAhead tiles on are prefetched while a tile is computed: once a decode step has
    // streamed the weights the cache is out of the caches, and one head's rows lie row_bytes
    // apart (every head of a position shares a row), which left each key a miss.
    constexpr int kAhead = 2;
    const std::size_t head_bytes = T == 0 ? static_cast<std::size_t>(hd) * 4
                                   : T == 1 ? static_cast<std::size_t>(hd) * 2
                                            : static_cast<std::size_t>(hd / 32) * 34;
    const auto prefetch_tile = [&](KvTiles& ahead, bool values) {
        const std::uint8_t* pk[L];
        const std::uint8_t* pv[L];
        const std::int64_t n = ahead.next(L, pk, pv);
        for (std::int64_t u = 0; u < n; ++u) {
            const std::uint8_t* row = values ? pv[u] : pk[u];
            for (std::size_t off = 0; off < head_bytes; off += 64) __builtin_prefetch(row + off);
            __builtin_prefetch(row + head_bytes - 1);
        }
    };
    // Scores: each key tile once for every query.
    KvTiles keys(runs, n_runs, row_bytes), keys_ahead(runs, n_runs, row_bytes);
    for (int i = 0; i < kAhead; ++i) prefetch_tile(keys_ahead, false);
    for (std::int64_t t0 = 0, n; (n = keys.next(L, k_rows, v_rows)) > 0; t0 += n) {
        prefetch_tile(keys_ahead, false);
        tile_rows<A, T>(k_rows, n, hd, tile_buf, rows);
        for_queries(t0, n, [&](std::int64_t qi, std::int64_t nq, std::int64_t lo, std::int64_t hi) {
            const float* q[4];
            float* dst[4];
            for (std::int64_t j = 0; j < nq; ++j) {
                q[j] = q_of(qi + j);
                dst[j] = scratch + (qi + j) * n_keys + t0;
            }
            if (nq == 4) {
                if constexpr (kGroup >= 4) score_tile<A, C, 4>(q, rows, lo, hi, hd, scale, dst);
            } else if (nq == 2) {
                if constexpr (kGroup >= 2) score_tile<A, C, 2>(q, rows, lo, hi, hd, scale, dst);
            } else {
                score_tile<A, C, 1>(q, rows, lo, hi, hd, scale, dst);
            }
        });
    }
    // Softmax, then each output summed over its keys in order, one value tile at a time.
    const float inv_cap = softcap > 0.0f ? 1.0f / softcap : 0.0f;
    for (std::int64_t qi = 0; qi < n_queries; ++qi) {
        const std::int64_t r = qi / qs.n_q, n_pos = qs.n_pos[r];
        float* s = scratch + qi * n_keys + start(r);
        if (softcap > 0.0f) {
            for (std::int64_t t = 0; t < n_pos; ++t) s[t] = std::tanh(s[t] * inv_cap) * softcap;
        }
        inv_sum[qi] = 1.0f / softmax_numerator<A>(s, n_pos);
        float* o = out_of(qi);
        for (std::int64_t i = 0; i < hd; ++i) o[i] = 0.0f;
    }
    KvTiles values(runs, n_runs, row_bytes), values_ahead(runs, n_runs, row_bytes);
    for (int i = 0; i < kAhead; ++i) prefetch_tile(values_ahead, true);
    for (std::int64_t t0 = 0, n; (n = values.next(L, k_rows, v_rows)) > 0; t0 += n) {
        prefetch_tile(values_ahead, true);
        tile_rows<A, T>(v_rows, n, hd, tile_buf, rows);
        for_queries(t0, n, [&](std::int64_t qi, std::int64_t nq, std::int64_t lo, std::int64_t hi) {
            const float* p[4];
            float* o[4];
            for (std::int64_t j = 0; j < nq; ++j) {
                p[j] = scratch + (qi + j) * n_keys + t0;
                o[j] = out_of(qi + j);
            }
            if (nq == 4) {
                if constexpr (kGroup >= 4) value_tile<A, C, 4>(p, rows, lo, hi, hd, o);
            } else if (nq == 2) {
                if constexpr (kGroup >= 2) value_tile<A, C, 2>(p, rows, lo, hi, hd, o);
            } else {
                value_tile<A, C, 1>(p, rows, lo, hi, hd, o);
            }
        });
    }
    for (std::int64_t qi = 0; qi < n_queries; ++qi) {
        float* o = out_of(qi);
        const FB<A> inv(inv_sum[qi]);
        for (std::int64_t i = 0; i < hd; i += L) store_part<A>(o + i, load_part<A>(o + i, hd - i) * inv, hd - i);
    }
}

template <class A, int T>
inline void attend_kv(const AttendQueries& qs, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                      std::size_t row_bytes, float scale, float softcap, float* scratch) {
    constexpr std::int64_t L = kLanes<A>;
    switch (hd % L == 0 ? hd / L : 0) {
        case 1: return attend_kv_heads<A, T, 1>(qs, hd, runs, n_runs, row_bytes, scale, softcap, scratch);
        case 2: return attend_kv_heads<A, T, 2>(qs, hd, runs, n_runs, row_bytes, scale, softcap, scratch);
        case 4: return attend_kv_heads<A, T, 4>(qs, hd, runs, n_runs, row_bytes, scale, softcap, scratch);
        case 8: return attend_kv_heads<A, T, 8>(qs, hd, runs, n_runs, row_bytes, scale, softcap, scratch);
        default: return attend_kv_heads<A, T, 0>(qs, hd, runs, n_runs, row_bytes, scale, softcap, scratch);
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
                    std::size_t row_bytes, float scale, float softcap, float* scratch) {            \
        ::ember::kernels::attend_kv<Arch, 0>(queries, hd, runs, n_runs, row_bytes, scale, softcap, scratch); \
    }                                                                                               \
    void attend_f16(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, \
                    std::size_t row_bytes, float scale, float softcap, float* scratch) {            \
        ::ember::kernels::attend_kv<Arch, 1>(queries, hd, runs, n_runs, row_bytes, scale, softcap, scratch); \
    }                                                                                               \
    void attend_q8_0(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, \
                     std::size_t row_bytes, float scale, float softcap, float* scratch) {           \
        ::ember::kernels::attend_kv<Arch, 2>(queries, hd, runs, n_runs, row_bytes, scale, softcap, scratch); \
    }

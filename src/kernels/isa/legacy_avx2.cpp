// AVX2 + FMA + F16C kernels (Haswell and later; no VNNI so the path runs on every AVX2 CPU).
// Integer block dots: maddubs(unsigned quants, signed activations) - maddubs(offset, activations)
// in int16 (exact: |sum| <= 2*31*127), widened by madd. Kernel code only: no STL, helpers have
// internal linkage.
#include <immintrin.h>

#include <cstring>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels::avx2 {
namespace {

enum Kind { kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0 };

inline float h2f(std::uint16_t h) { return _cvtsh_ss(h); }

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline __m256i nibbles(const std::uint8_t* qs) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(t), _mm_srli_epi16(t, 4), 1);
    return _mm256_and_si256(b, _mm256_set1_epi8(0x0f));
}

// 0x10 in byte j where bit j of qh is set.
inline __m256i fifth_bits(const std::uint8_t* qhp) {
    std::uint32_t qh;
    std::memcpy(&qh, qhp, 4);
    const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), shuf);
    b = _mm256_or_si256(b, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfeLL));
    b = _mm256_cmpeq_epi8(b, _mm256_set1_epi64x(-1));
    return _mm256_and_si256(b, _mm256_set1_epi8(0x10));
}

template <int K> struct Traits;
template <> struct Traits<kQ4_0> { using W = BlockQ4_0; using A = BlockQ8_0; static constexpr int off = 8; };
template <> struct Traits<kQ4_1> { using W = BlockQ4_1; using A = BlockQ8_1; static constexpr int off = 0; };
template <> struct Traits<kQ5_0> { using W = BlockQ5_0; using A = BlockQ8_0; static constexpr int off = 16; };
template <> struct Traits<kQ5_1> { using W = BlockQ5_1; using A = BlockQ8_1; static constexpr int off = 0; };
template <> struct Traits<kQ8_0> { using W = BlockQ8_0; using A = BlockQ8_0; static constexpr int off = 0; };

// Quants of one weight block as bytes (unsigned for 4/5-bit kinds, signed for Q8_0).
template <int K> inline __m256i load_quants(const typename Traits<K>::W& b) {
    if constexpr (K == kQ8_0) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
    } else if constexpr (K == kQ5_0 || K == kQ5_1) {
        return _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh));
    } else {
        return nibbles(b.qs);
    }
}

template <int K> inline float load_m(const typename Traits<K>::W& b) {
    if constexpr (K == kQ4_1 || K == kQ5_1) return h2f(b.m); else return 0.0f;
}
template <int K> inline float load_s(const typename Traits<K>::A& b) {
    if constexpr (K == kQ4_1 || K == kQ5_1) return h2f(b.s); else return 0.0f;
}

// R weight rows x T activation rows over nb blocks; y[t * ldy + r].
template <int K, int R, int T>
inline void micro(std::int64_t nb, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                  std::size_t as, float* y, std::int64_t ldy) {
    using WB = typename Traits<K>::W;
    using AB = typename Traits<K>::A;
    constexpr bool kHasMin = K == kQ4_1 || K == kQ5_1;
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i off = _mm256_set1_epi8(static_cast<char>(Traits<K>::off));
    __m256 acc[R][T];
    float macc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) {
            acc[r][t] = _mm256_setzero_ps();
            macc[r][t] = 0.0f;
        }
    for (std::int64_t b = 0; b < nb; ++b) {
        __m256i q[R];
        float dw[R], mw[R];
        for (int r = 0; r < R; ++r) {
            const WB& blk = reinterpret_cast<const WB*>(w + r * ws)[b];
            q[r] = load_quants<K>(blk);
            dw[r] = h2f(blk.d);
            mw[r] = load_m<K>(blk);
        }
        for (int t = 0; t < T; ++t) {
            const AB& ab = reinterpret_cast<const AB*>(a + t * as)[b];
            const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab.qs));
            const float da = h2f(ab.d);
            const float sa = load_s<K>(ab);
            __m256i corr = _mm256_setzero_si256();
            if constexpr (Traits<K>::off != 0) corr = _mm256_maddubs_epi16(off, qy);
            for (int r = 0; r < R; ++r) {
                __m256i p;
                if constexpr (K == kQ8_0) {
                    p = _mm256_maddubs_epi16(_mm256_sign_epi8(q[r], q[r]), _mm256_sign_epi8(qy, q[r]));
                } else {
                    p = _mm256_maddubs_epi16(q[r], qy);
                    if constexpr (Traits<K>::off != 0) p = _mm256_sub_epi16(p, corr);
                }
                const __m256 s = _mm256_cvtepi32_ps(_mm256_madd_epi16(p, ones));
                acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(dw[r] * da), s, acc[r][t]);
                if constexpr (kHasMin) macc[r][t] += mw[r] * sa;
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum(acc[r][t]) + macc[r][t];
}

template <int K>
inline float vec_dot(std::int64_t n, const void* w, const void* a) {
    float y;
    micro<K, 1, 1>(n / kQK, static_cast<const std::uint8_t*>(w), 0,
                   static_cast<const std::uint8_t*>(a), 0, &y, 1);
    return y;
}

template <int K>
inline void tile(std::int64_t n, const void* wv, std::size_t ws, std::int64_t n_w, const void* av,
                 std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {
    constexpr int R = 4, T = 2;
    const std::int64_t nb = n / kQK;
    const auto* w = static_cast<const std::uint8_t*>(wv);
    const auto* a = static_cast<const std::uint8_t*>(av);
    std::int64_t r = 0;
    for (; r + R <= n_w; r += R) {
        std::int64_t t = 0;
        for (; t + T <= n_a; t += T) micro<K, R, T>(nb, w + r * ws, ws, a + t * as, as, y + t * ldy + r, ldy);
        for (; t < n_a; ++t) micro<K, R, 1>(nb, w + r * ws, ws, a + t * as, as, y + t * ldy + r, ldy);
    }
    for (; r < n_w; ++r) {
        std::int64_t t = 0;
        for (; t + T <= n_a; t += T) micro<K, 1, T>(nb, w + r * ws, ws, a + t * as, as, y + t * ldy + r, ldy);
        for (; t < n_a; ++t) micro<K, 1, 1>(nb, w + r * ws, ws, a + t * as, as, y + t * ldy + r, ldy);
    }
}

}  // namespace

float vec_dot_q4_0(std::int64_t n, const void* w, const void* a) { return vec_dot<kQ4_0>(n, w, a); }
float vec_dot_q4_1(std::int64_t n, const void* w, const void* a) { return vec_dot<kQ4_1>(n, w, a); }
float vec_dot_q5_0(std::int64_t n, const void* w, const void* a) { return vec_dot<kQ5_0>(n, w, a); }
float vec_dot_q5_1(std::int64_t n, const void* w, const void* a) { return vec_dot<kQ5_1>(n, w, a); }
float vec_dot_q8_0(std::int64_t n, const void* w, const void* a) { return vec_dot<kQ8_0>(n, w, a); }

#define EMBER_TILE(name, kind)                                                                   \
    void name(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a,   \
              std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {                    \
        tile<kind>(n, w, ws, n_w, a, as, n_a, y, ldy);                                           \
    }
EMBER_TILE(tile_q4_0, kQ4_0)
EMBER_TILE(tile_q4_1, kQ4_1)
EMBER_TILE(tile_q5_0, kQ5_0)
EMBER_TILE(tile_q5_1, kQ5_1)
EMBER_TILE(tile_q8_0, kQ8_0)
#undef EMBER_TILE

// Float rows: four 8-lane accumulators, scalar tail.
float vec_dot_f32(std::int64_t n, const void* wv, const void* av) {
    const auto* x = static_cast<const float*>(wv);
    const auto* y = static_cast<const float*>(av);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    std::int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), s3);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    float sum = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; ++i) sum += x[i] * y[i];
    return sum;
}

float vec_dot_f16(std::int64_t n, const void* wv, const void* av) {
    const auto* x = static_cast<const std::uint16_t*>(wv);
    const auto* y = static_cast<const std::uint16_t*>(av);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 x0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
        const __m256 y0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i)));
        const __m256 x1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i + 8)));
        const __m256 y1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i + 8)));
        s0 = _mm256_fmadd_ps(x0, y0, s0);
        s1 = _mm256_fmadd_ps(x1, y1, s1);
    }
    float sum = hsum(_mm256_add_ps(s0, s1));
    for (; i < n; ++i) sum += _cvtsh_ss(x[i]) * _cvtsh_ss(y[i]);
    return sum;
}

namespace {
inline __m256 bf16x8(const std::uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
inline float bf2f(std::uint16_t h) {
    const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
}  // namespace

float vec_dot_bf16(std::int64_t n, const void* wv, const void* av) {
    const auto* x = static_cast<const std::uint16_t*>(wv);
    const auto* y = static_cast<const std::uint16_t*>(av);
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(bf16x8(x + i), bf16x8(y + i), s0);
        s1 = _mm256_fmadd_ps(bf16x8(x + i + 8), bf16x8(y + i + 8), s1);
    }
    float sum = hsum(_mm256_add_ps(s0, s1));
    for (; i < n; ++i) sum += bf2f(x[i]) * bf2f(y[i]);
    return sum;
}

float dot(const float* a, const float* b, std::int64_t n) { return vec_dot_f32(n, a, b); }

void axpy(float* y, float a, const float* x, std::int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    }
    for (; i < n; ++i) y[i] += a * x[i];
}

}  // namespace ember::kernels::avx2

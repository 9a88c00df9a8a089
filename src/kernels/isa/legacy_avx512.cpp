// AVX-512 (F/BW/VL/DQ + VNNI) kernels: two 32-value blocks per 512-bit register, integer dots by
// vpdpbusd on unsigned quants (Q8_0 weights biased by +128), the bias removed once per activation
// block: sum((q - off) * y) = dpbusd(-dpbusd(off, y), q, y). Kernel code only: no STL.
// GCC 12 reports _mm512_undefined_* inside cast/insert intrinsics as uninitialized (false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels::avx512 {
namespace {

enum Kind { kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0 };

inline float h2f(std::uint16_t h) { return _cvtsh_ss(h); }

inline __m256i nibbles(const std::uint8_t* qs) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(t), _mm_srli_epi16(t, 4), 1);
    return _mm256_and_si256(b, _mm256_set1_epi8(0x0f));
}

inline __m256i fifth_bits(const std::uint8_t* qhp) {
    std::uint32_t qh;
    std::memcpy(&qh, qhp, 4);
    const __m256i bits = _mm256_maskz_set1_epi8(static_cast<__mmask32>(qh), 0x10);
    return bits;
}

template <int K> struct Traits;
template <> struct Traits<kQ4_0> { using W = BlockQ4_0; using A = BlockQ8_0; static constexpr int off = 8; };
template <> struct Traits<kQ4_1> { using W = BlockQ4_1; using A = BlockQ8_1; static constexpr int off = 0; };
template <> struct Traits<kQ5_0> { using W = BlockQ5_0; using A = BlockQ8_0; static constexpr int off = 16; };
template <> struct Traits<kQ5_1> { using W = BlockQ5_1; using A = BlockQ8_1; static constexpr int off = 0; };
template <> struct Traits<kQ8_0> { using W = BlockQ8_0; using A = BlockQ8_0; static constexpr int off = 128; };

// Unsigned quants of one weight block.
template <int K> inline __m256i load_quants(const typename Traits<K>::W& b) {
    if constexpr (K == kQ8_0) {
        return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)),
                                _mm256_set1_epi8(static_cast<char>(0x80)));
    } else if constexpr (K == kQ5_0 || K == kQ5_1) {
        return _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh));
    } else {
        return nibbles(b.qs);
    }
}

constexpr bool has_min(int k) { return k == kQ4_1 || k == kQ5_1; }

inline __m512i join(__m256i lo, __m256i hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
inline __m512 join(float lo, float hi) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(lo)), _mm256_set1_ps(hi), 1);
}

template <int K, int R, int T>
inline void micro(std::int64_t nb, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                  std::size_t as, float* y, std::int64_t ldy) {
    using WB = typename Traits<K>::W;
    using AB = typename Traits<K>::A;
    const __m512i off = _mm512_set1_epi8(static_cast<char>(Traits<K>::off));
    __m512 acc[R][T];
    float macc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) {
            acc[r][t] = _mm512_setzero_ps();
            macc[r][t] = 0.0f;
        }
    for (std::int64_t b = 0; b < nb; b += 2) {
        const bool two = b + 1 < nb;
        __m512i q[R];
        __m512 dw[R];
        float m0[R], m1[R];
        for (int r = 0; r < R; ++r) {
            const WB* blk = reinterpret_cast<const WB*>(w + r * ws) + b;
            q[r] = join(load_quants<K>(blk[0]), two ? load_quants<K>(blk[1]) : _mm256_setzero_si256());
            dw[r] = join(h2f(blk[0].d), two ? h2f(blk[1].d) : 0.0f);
            if constexpr (has_min(K)) {
                m0[r] = h2f(blk[0].m);
                m1[r] = two ? h2f(blk[1].m) : 0.0f;
            }
        }
        for (int t = 0; t < T; ++t) {
            const AB* ab = reinterpret_cast<const AB*>(a + t * as) + b;
            const __m256i y0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab[0].qs));
            const __m256i y1 = two ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab[1].qs))
                                   : _mm256_setzero_si256();
            const __m512i qy = join(y0, y1);
            const __m512 da = join(h2f(ab[0].d), two ? h2f(ab[1].d) : 0.0f);
            __m512i init = _mm512_setzero_si512();
            if constexpr (Traits<K>::off != 0) {
                init = _mm512_sub_epi32(init, _mm512_dpbusd_epi32(_mm512_setzero_si512(), off, qy));
            }
            float s0 = 0.0f, s1 = 0.0f;
            if constexpr (has_min(K)) {
                s0 = h2f(ab[0].s);
                s1 = two ? h2f(ab[1].s) : 0.0f;
            }
            for (int r = 0; r < R; ++r) {
                const __m512i i = _mm512_dpbusd_epi32(init, q[r], qy);
                acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(dw[r], da), _mm512_cvtepi32_ps(i), acc[r][t]);
                if constexpr (has_min(K)) macc[r][t] += m0[r] * s0 + m1[r] * s1;
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]) + macc[r][t];
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
    constexpr int R = 4, T = 4;
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

float vec_dot_f32(std::int64_t n, const void* wv, const void* av) {
    const auto* x = static_cast<const float*>(wv);
    const auto* y = static_cast<const float*>(av);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    std::int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16), s1);
        s2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 32), _mm512_loadu_ps(y + i + 32), s2);
        s3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 48), _mm512_loadu_ps(y + i + 48), s3);
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), s0);
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

float vec_dot_f16(std::int64_t n, const void* wv, const void* av) {
    const auto* x = static_cast<const std::uint16_t*>(wv);
    const auto* y = static_cast<const std::uint16_t*>(av);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    std::int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))),
                             _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i))), s0);
        s1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 16))),
                             _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i + 16))), s1);
    }
    for (; i < n; i += 16) {
        const std::int64_t left = n - i < 16 ? n - i : 16;
        const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
        s0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i)),
                             _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, y + i)), s0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

namespace {
inline __m512 bf16x16(__mmask16 m, const std::uint16_t* p) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}
}  // namespace

float vec_dot_bf16(std::int64_t n, const void* wv, const void* av) {
    const auto* x = static_cast<const std::uint16_t*>(wv);
    const auto* y = static_cast<const std::uint16_t*>(av);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    std::int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm512_fmadd_ps(bf16x16(0xffff, x + i), bf16x16(0xffff, y + i), s0);
        s1 = _mm512_fmadd_ps(bf16x16(0xffff, x + i + 16), bf16x16(0xffff, y + i + 16), s1);
    }
    for (; i < n; i += 16) {
        const std::int64_t left = n - i < 16 ? n - i : 16;
        const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
        s0 = _mm512_fmadd_ps(bf16x16(m, x + i), bf16x16(m, y + i), s0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

// AVX512_BF16: vdpbf16ps multiplies pairs of bf16 and accumulates in fp32.
float vec_dot_bf16_dp(std::int64_t n, const void* wv, const void* av) {
    const auto* x = static_cast<const std::uint16_t*>(wv);
    const auto* y = static_cast<const std::uint16_t*>(av);
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    std::int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_loadu_si512(x + i), (__m512bh)_mm512_loadu_si512(y + i));
        s1 = _mm512_dpbf16_ps(s1, (__m512bh)_mm512_loadu_si512(x + i + 32), (__m512bh)_mm512_loadu_si512(y + i + 32));
    }
    for (; i < n; i += 32) {
        const std::int64_t left = n - i < 32 ? n - i : 32;
        const __mmask32 m = left == 32 ? 0xffffffffu : static_cast<__mmask32>((1u << left) - 1u);
        s0 = _mm512_dpbf16_ps(s0, (__m512bh)_mm512_maskz_loadu_epi16(m, x + i),
                              (__m512bh)_mm512_maskz_loadu_epi16(m, y + i));
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

float dot(const float* a, const float* b, std::int64_t n) { return vec_dot_f32(n, a, b); }

void axpy(float* y, float a, const float* x, std::int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    }
    if (i < n) {
        const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, x + i),
                                                        _mm512_maskz_loadu_ps(m, y + i)));
    }
}

}  // namespace ember::kernels::avx512

// Activation quantizers, bit-identical to the scalar ones (quants.cpp): amax by max of |x|,
// d = amax / 127, q = round-half-even(x * (127 / amax)) by vcvtps2dq, d to fp16 by vcvtps2ph.
namespace ember::kernels::avx512 {
namespace {
template <bool WithSum>
inline void quantize_q8(const float* x, std::uint8_t* out, std::size_t block_bytes, std::int64_t n) {
    const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK, out += block_bytes) {
        const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
        const float amax = _mm512_reduce_max_ps(
            _mm512_max_ps(_mm512_and_ps(v0, abs_mask), _mm512_and_ps(v1, abs_mask)));
        const float d = amax / 127.f;
        const float id = amax != 0.0f ? 127.f / amax : 0.0f;
        const __m512 vid = _mm512_set1_ps(id);
        const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, vid));
        const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, vid));
        std::int8_t* qs = reinterpret_cast<std::int8_t*>(out + (WithSum ? 4 : 2));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtsepi32_epi8(q0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtsepi32_epi8(q1));
        const std::uint16_t dh = _cvtss_sh(d, 0);
        std::memcpy(out, &dh, 2);
        if constexpr (WithSum) {
            const int sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
            const std::uint16_t sh = _cvtss_sh(d * static_cast<float>(sum), 0);
            std::memcpy(out + 2, &sh, 2);
        }
    }
}
}  // namespace

void quantize_act_q8_0(const float* x, void* dst, std::int64_t n) {
    quantize_q8<false>(x, static_cast<std::uint8_t*>(dst), sizeof(BlockQ8_0), n);
}
void quantize_act_q8_1(const float* x, void* dst, std::int64_t n) {
    quantize_q8<true>(x, static_cast<std::uint8_t*>(dst), sizeof(BlockQ8_1), n);
}
}  // namespace ember::kernels::avx512

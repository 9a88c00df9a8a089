// AVX-512 (BW + VNNI) K-quant x Q8_K dot products. A superblock is four 64-value groups, each
// one zmm: the 32 packed bytes are broadcast to both 256-bit halves and shifted per half so the
// unpacked values line up with 64 contiguous activations (no activation shuffles). int16 pair
// products are scaled and accumulated in one vpdpwssd; the min / -32 terms use the bsums.
// Kernel code only: raw pointers, intrinsics, internal-linkage helpers.
// GCC 12's AVX-512 headers build "undefined" vectors as `__m512i __Y = __Y;`, which trips
// -W(maybe-)uninitialized on every masked-out intrinsic: a known false positive.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstdint>

#include "kernels/kquant.hpp"

namespace ember::kernels {
namespace {

inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline float fp16(std::uint16_t h) { return _cvtsh_ss(h); }

inline __m128i unpack_scales_k4(const std::uint8_t* q) {
    std::uint32_t w0, w1, w2;
    __builtin_memcpy(&w0, q, 4);
    __builtin_memcpy(&w1, q + 4, 4);
    __builtin_memcpy(&w2, q + 8, 4);
    const std::uint32_t sc_lo = w0 & 0x3F3F3F3Fu;
    const std::uint32_t m_lo = w1 & 0x3F3F3F3Fu;
    const std::uint32_t sc_hi = (w2 & 0x0F0F0F0Fu) | (((w0 >> 6) & 0x03030303u) << 4);
    const std::uint32_t m_hi = ((w2 >> 4) & 0x0F0F0F0Fu) | (((w1 >> 6) & 0x03030303u) << 4);
    return _mm_set_epi32(static_cast<int>(m_hi), static_cast<int>(m_lo),
                         static_cast<int>(sc_hi), static_cast<int>(sc_lo));
}

inline __m256i mins_dot_bsums(__m128i sm, const std::int16_t* bsums) {
    const __m128i mins = _mm_unpackhi_epi64(sm, sm);
    const __m256i mins2 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins, mins));
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums));
    return _mm256_madd_epi16(bs, mins2);
}

/// vpshufb control: words `lo` in 128-bit lanes 0-1 and `hi` in lanes 2-3 (of a broadcast xmm).
inline __m512i word_bcast_halves(int lo, int hi) {
    const auto rep = [](int j) {
        return static_cast<long long>((0x0100ull + 0x0202ull * static_cast<unsigned>(j)) * 0x0001000100010001ull);
    };
    return _mm512_set_epi64(rep(hi), rep(hi), rep(hi), rep(hi), rep(lo), rep(lo), rep(lo), rep(lo));
}

inline __m512i bcast256(const std::uint8_t* p) {
    return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

template <bool kQ5>
float dot_q45_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* y = static_cast<const BlockQ8K*>(vy);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i bit4 = _mm512_set1_epi8(0x10);
    const __m512i nib_shift = _mm512_set_epi64(4, 4, 4, 4, 0, 0, 0, 0);  // low half: low nibbles
    const __m512i ctl[4] = {word_bcast_halves(0, 1), word_bcast_halves(2, 3),
                            word_bcast_halves(4, 5), word_bcast_halves(6, 7)};
    // qh bit b = 2k (low half) / 2k+1 (high half) to bit 4 of the same byte: rotating each
    // 64-bit lane left by (4 - b) mod 64 does that for all 8 bytes at once (bit 4 of byte B
    // then comes from lane bit 8B + b, which is bit b of byte B).
    const __m512i qh_rot[4] = {
        _mm512_set_epi64(3, 3, 3, 3, 4, 4, 4, 4), _mm512_set_epi64(1, 1, 1, 1, 2, 2, 2, 2),
        _mm512_set_epi64(63, 63, 63, 63, 0, 0, 0, 0), _mm512_set_epi64(61, 61, 61, 61, 62, 62, 62, 62)};
    __m512 acc = _mm512_setzero_ps();
    __m256 acc_m = _mm256_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        const std::uint8_t* scales;
        const std::uint8_t* qs;
        const std::uint8_t* qhp = nullptr;
        std::uint16_t d16, dmin16;
        if constexpr (kQ5) {
            const auto* x = static_cast<const BlockQ5K*>(vx) + i;
            scales = x->scales, qs = x->qs, qhp = x->qh, d16 = x->d, dmin16 = x->dmin;
        } else {
            const auto* x = static_cast<const BlockQ4K*>(vx) + i;
            scales = x->scales, qs = x->qs, d16 = x->d, dmin16 = x->dmin;
        }
        const float dy = y[i].d;
        const __m128i sm = unpack_scales_k4(scales);
        acc_m = _mm256_fmadd_ps(_mm256_set1_ps(dy * fp16(dmin16)),
                                _mm256_cvtepi32_ps(mins_dot_bsums(sm, y[i].bsums)), acc_m);
        const __m512i sc = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(sm));
        __m512i qh;
        if constexpr (kQ5) qh = bcast256(qhp);
        const auto* a = reinterpret_cast<const __m512i*>(y[i].qs);
        __m512i sumi = _mm512_setzero_si512();
        for (int k = 0; k < 4; ++k) {
            __m512i q = _mm512_and_si512(_mm512_srlv_epi64(bcast256(qs + 32 * k), nib_shift), m4);
            if constexpr (kQ5) {
                q = _mm512_ternarylogic_epi64(q, _mm512_rolv_epi64(qh, qh_rot[k]), bit4, 0xF8);  // q | (h & 0x10)
            }
            const __m512i p = _mm512_maddubs_epi16(q, _mm512_loadu_si512(a + k));
            sumi = _mm512_dpwssd_epi32(sumi, p, _mm512_shuffle_epi8(sc, ctl[k]));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * fp16(d16)), _mm512_cvtepi32_ps(sumi), acc);
    }
    return _mm512_reduce_add_ps(acc) - hsum_ps(acc_m);
}

float dot_q6_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockQ6K*>(vx);
    const auto* y = static_cast<const BlockQ8K*>(vy);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i m30 = _mm512_set1_epi8(0x30);
    // Group 0 of a half: values 0..31 take qh bits 0-1 (<<4), 32..63 bits 2-3 (<<2).
    // Group 1: values 64..95 bits 4-5 (as is), 96..127 bits 6-7 (>>2). Rotates per 64-bit lane.
    const __m512i qh_rot0 = _mm512_set_epi64(2, 2, 2, 2, 4, 4, 4, 4);
    const __m512i qh_rot1 = _mm512_set_epi64(62, 62, 62, 62, 0, 0, 0, 0);
    // Scale words per 128-bit lane (16 values each): group g of half h uses scales 8h+4g+lane.
    __m512i sc_idx[4];
    for (int g = 0; g < 4; ++g) {
        alignas(64) short idx[32];
        for (int w = 0; w < 32; ++w) idx[w] = static_cast<short>(4 * g + w / 8);
        sc_idx[g] = _mm512_load_si512(idx);
    }
    __m512 acc = _mm512_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        const __m256i sc16 = _mm256_cvtepi8_epi16(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[i].scales)));
        const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].bsums));
        const __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5);
        __m512i sumi = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_zextsi256_si512(bias));
        const __m512i scz = _mm512_zextsi256_si512(sc16);
        const auto* a = reinterpret_cast<const __m512i*>(y[i].qs);
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(x[i].ql + 64 * h);
            const __m512i qh = bcast256(x[i].qh + 32 * h);
            const __m512i q0 = _mm512_ternarylogic_epi64(
                _mm512_and_si512(ql, m4), _mm512_rolv_epi64(qh, qh_rot0), m30, 0xF8);
            const __m512i q1 = _mm512_ternarylogic_epi64(
                _mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), _mm512_rolv_epi64(qh, qh_rot1), m30, 0xF8);
            const __m512i p0 = _mm512_maddubs_epi16(q0, _mm512_loadu_si512(a + 2 * h));
            const __m512i p1 = _mm512_maddubs_epi16(q1, _mm512_loadu_si512(a + 2 * h + 1));
            sumi = _mm512_dpwssd_epi32(sumi, p0, _mm512_permutexvar_epi16(sc_idx[2 * h], scz));
            sumi = _mm512_dpwssd_epi32(sumi, p1, _mm512_permutexvar_epi16(sc_idx[2 * h + 1], scz));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(y[i].d * fp16(x[i].d)), _mm512_cvtepi32_ps(sumi), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

}  // namespace

float vec_dot_q4_k_q8_k_avx512(std::int64_t n, const void* x, const void* y) { return dot_q45_k<false>(n, x, y); }
float vec_dot_q5_k_q8_k_avx512(std::int64_t n, const void* x, const void* y) { return dot_q45_k<true>(n, x, y); }
float vec_dot_q6_k_q8_k_avx512(std::int64_t n, const void* x, const void* y) { return dot_q6_k(n, x, y); }

}  // namespace ember::kernels

// AVX2 K-quant x Q8_K dot products, plain (Haswell) and with AVX-VNNI (vpdpwssd fuses the
// int16 scale multiply-add with the accumulation): kquant_avx2.cpp instantiates kVnni = false,
// kquant_avx2_vnni.cpp (the only TU built with -mavxvnni) kVnni = true. Per superblock the
// int32 sums stay in vector lanes and are converted to float once; the min / -32 offset terms
// come from the activations' bsums. Kernel bodies only, internal linkage.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/tile_sweep-inl.hpp"
#include "kernels/isa/x86_common-inl.hpp"
#include "kernels/kquant_blocks.hpp"

namespace ember::kernels {
namespace {

/// sum += p (int16 pairs) * s (int16), as int32.
template <bool kVnni>
inline __m256i madd_acc(__m256i sum, __m256i p, __m256i s) {
#if defined(__AVXVNNI__)
    if constexpr (kVnni) return _mm256_dpwssd_avx_epi32(sum, p, s);
#endif
    return _mm256_add_epi32(sum, _mm256_madd_epi16(p, s));
}

/// Shuffle controls that broadcast int16 word j of each 128-bit lane.
inline __m256i word_bcast(int j) { return _mm256_set1_epi16(static_cast<short>(0x0100 + 0x0202 * j)); }

/// Controls that broadcast word `lo` in the low 128-bit lane and word `hi` in the high lane.
inline __m256i word_bcast2(int lo, int hi) {
    return _mm256_setr_m128i(_mm_set1_epi16(static_cast<short>(0x0100 + 0x0202 * lo)),
                             _mm_set1_epi16(static_cast<short>(0x0100 + 0x0202 * hi)));
}

/// One weight row against NT activation rows (a_stride bytes apart), each unpacked 32-byte group
/// used NT times; NT = 1 is vec_dot. Per token the int32 lanes and float operations do not depend
/// on NT, so tiles and vec_dot give identical results.
template <bool kVnni, bool kQ5, int NT>
void dot_q45_k(std::int64_t n, const void* vx, const std::uint8_t* a, std::size_t a_stride, float* out) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    __m256 acc[NT], acc_m[NT];
    for (int t = 0; t < NT; ++t) acc[t] = acc_m[t] = _mm256_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        constexpr std::size_t kBlockBytes = kQ5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K);
        prefetch_ahead<kBlockBytes>(static_cast<const std::uint8_t*>(vx) + static_cast<std::size_t>(i) * kBlockBytes);
        const KHead<kQ5> head(vx, i);
        const std::uint8_t* qs = head.qs;
        const __m128i sm = head.sm;
        const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
        const std::uint8_t* y[NT];  // Q8_K block i of each token
        for (int t = 0; t < NT; ++t) {
            y[t] = a + static_cast<std::size_t>(t) * a_stride + static_cast<std::size_t>(i) * sizeof(BlockQ8K);
            acc_m[t] = _mm256_fmadd_ps(_mm256_set1_ps(kq_ld_f32(y[t]) * head.dmin),
                                       _mm256_cvtepi32_ps(mins_dot_bsums(sm, (y[t] + offsetof(BlockQ8K, bsums)))), acc_m[t]);
        }
        __m256i qh;
        if constexpr (kQ5) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(head.qh));
        __m256i sumi[NT];
        for (int t = 0; t < NT; ++t) sumi[t] = _mm256_setzero_si256();
        for (int k = 0; k < 4; ++k) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * k));
            __m256i lo = _mm256_and_si256(q, m4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            if constexpr (kQ5) {
                lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(qh, 4), bit4));
                hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(qh, 3), bit4));
                qh = _mm256_srli_epi16(qh, 2);
            }
            const __m256i s0 = _mm256_shuffle_epi8(sc, word_bcast(2 * k));
            const __m256i s1 = _mm256_shuffle_epi8(sc, word_bcast(2 * k + 1));
            for (int t = 0; t < NT; ++t) {
                const std::uint8_t* at = y[t] + offsetof(BlockQ8K, qs) + 64 * k;
                sumi[t] = madd_acc<kVnni>(sumi[t], _mm256_maddubs_epi16(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at))), s0);
                sumi[t] = madd_acc<kVnni>(sumi[t], _mm256_maddubs_epi16(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 32))), s1);
            }
        }
        for (int t = 0; t < NT; ++t) {
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(kq_ld_f32(y[t]) * head.d), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = hsum_ps(acc[t]) - hsum_ps(acc_m[t]);
}

template <bool kVnni, int NT>
void dot_q6_k(std::int64_t n, const void* vx, const std::uint8_t* a, std::size_t a_stride, float* out) {
    const auto* x0 = static_cast<const std::uint8_t*>(vx);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i m30 = _mm256_set1_epi8(0x30);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        const std::uint8_t* xb = x0 + static_cast<std::size_t>(i) * sizeof(BlockQ6K);
        prefetch_ahead<sizeof(BlockQ6K)>(xb);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xb + offsetof(BlockQ6K, scales))));
        const std::uint8_t* y[NT];  // Q8_K block i of each token
        __m256i sumi[NT];
        for (int t = 0; t < NT; ++t) {
            y[t] = a + static_cast<std::size_t>(t) * a_stride + static_cast<std::size_t>(i) * sizeof(BlockQ8K);
            const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[t] + offsetof(BlockQ8K, bsums)));
            sumi[t] = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5));
        }
        const std::uint8_t* ql = xb + offsetof(BlockQ6K, ql);
        const std::uint8_t* qhp = xb + offsetof(BlockQ6K, qh);
        for (int h = 0; h < 2; ++h, ql += 64, qhp += 32) {
            const __m256i sc = _mm256_broadcastsi128_si256(h == 0 ? _mm256_castsi256_si128(sc16)
                                                                  : _mm256_extracti128_si256(sc16, 1));
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
            const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp));
            __m256i q[4];
            q6k_quads(l0, l1, qh, m4, m30, q);
            for (int g = 0; g < 4; ++g) {
                const __m256i s = _mm256_shuffle_epi8(sc, word_bcast2(2 * g, 2 * g + 1));
                for (int t = 0; t < NT; ++t) {
                    const auto* av = reinterpret_cast<const __m256i*>((y[t] + offsetof(BlockQ8K, qs)) + 128 * h + 32 * g);
                    sumi[t] = madd_acc<kVnni>(sumi[t], _mm256_maddubs_epi16(q[g], _mm256_loadu_si256(av)), s);
                }
            }
        }
        for (int t = 0; t < NT; ++t) {
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(kq_ld_f32(y[t]) * h2f(kq_ld_u16(xb + offsetof(BlockQ6K, d)))), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = hsum_ps(acc[t]);
}

/// Token groups of 1, 2, 3 and 4.
template <bool kVnni>
struct KquantTiles {
    static constexpr MultiDot q4[4] = {dot_q45_k<kVnni, false, 1>, dot_q45_k<kVnni, false, 2>,
                                       dot_q45_k<kVnni, false, 3>, dot_q45_k<kVnni, false, 4>};
    static constexpr MultiDot q5[4] = {dot_q45_k<kVnni, true, 1>, dot_q45_k<kVnni, true, 2>,
                                       dot_q45_k<kVnni, true, 3>, dot_q45_k<kVnni, true, 4>};
    static constexpr MultiDot q6[4] = {dot_q6_k<kVnni, 1>, dot_q6_k<kVnni, 2>, dot_q6_k<kVnni, 3>,
                                       dot_q6_k<kVnni, 4>};
};

}  // namespace
}  // namespace ember::kernels

/// Defines vec_dot_q4_k ... and tile_q4_k ... of the enclosing ISA namespace.
#define EMBER_KQUANT_AVX2_EXPORTS(kVnni)                                                              \
    float vec_dot_q4_k(std::int64_t n, const void* x, const void* y) { return dot1(KquantTiles<kVnni>::q4[0], n, x, y); } \
    float vec_dot_q5_k(std::int64_t n, const void* x, const void* y) { return dot1(KquantTiles<kVnni>::q5[0], n, x, y); } \
    float vec_dot_q6_k(std::int64_t n, const void* x, const void* y) { return dot1(KquantTiles<kVnni>::q6[0], n, x, y); } \
    void tile_q4_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a,   \
                   std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {                    \
        sweep_rows_by4(KquantTiles<kVnni>::q4, n, w, ws, n_w, a, as, n_a, y, ldy);                    \
    }                                                                                                 \
    void tile_q5_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a,   \
                   std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {                    \
        sweep_rows_by4(KquantTiles<kVnni>::q5, n, w, ws, n_w, a, as, n_a, y, ldy);                    \
    }                                                                                                 \
    void tile_q6_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a,   \
                   std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {                    \
        sweep_rows_by4(KquantTiles<kVnni>::q6, n, w, ws, n_w, a, as, n_a, y, ldy);                    \
    }

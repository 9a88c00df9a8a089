// AVX2 K-quant x Q8_K dot products, plain (Haswell) and with AVX-VNNI (vpdpwssd fuses the
// int16 scale multiply-add with the accumulation). Kernel code only: raw pointers, intrinsics,
// internal-linkage helpers. Per superblock the int32 sums stay in vector lanes and are
// converted to float once; the min / -32 offset terms come from the activations' bsums.
#include <immintrin.h>

#include <cstddef>
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

/// 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of a Q4_K/Q5_K block, without memory trips.
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

/// sum += p (int16 pairs) * s (int16), as int32.
template <bool kVnni>
inline __m256i madd_acc(__m256i sum, __m256i p, __m256i s) {
    if constexpr (kVnni) {
        return _mm256_dpwssd_avx_epi32(sum, p, s);
    } else {
        return _mm256_add_epi32(sum, _mm256_madd_epi16(p, s));
    }
}

/// Sum over j of mins[j] * (bsums[2j] + bsums[2j+1]) in 8 int32 lanes.
inline __m256i mins_dot_bsums(__m128i sm, const std::uint8_t* bsums) {
    const __m128i mins = _mm_unpackhi_epi64(sm, sm);
    const __m256i mins2 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins, mins));  // m0 m0 m1 m1 ..
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums));
    return _mm256_madd_epi16(bs, mins2);
}

/// Shuffle controls that broadcast int16 word j of each 128-bit lane.
inline __m256i word_bcast(int j) { return _mm256_set1_epi16(static_cast<short>(0x0100 + 0x0202 * j)); }

template <bool kVnni, bool kQ5>
float dot_q45_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* y0 = static_cast<const std::uint8_t*>(vy);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    const __m256i ctl[8] = {word_bcast(0), word_bcast(1), word_bcast(2), word_bcast(3),
                            word_bcast(4), word_bcast(5), word_bcast(6), word_bcast(7)};
    __m256 acc = _mm256_setzero_ps();
    __m256 acc_m = _mm256_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        const std::uint8_t* yb = y0 + static_cast<std::size_t>(i) * sizeof(BlockQ8K);
        const std::uint8_t* xb = static_cast<const std::uint8_t*>(vx) +
                                 static_cast<std::size_t>(i) * (kQ5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K));
        const std::uint8_t* scales = xb + offsetof(BlockQ4K, scales);
        const std::uint8_t* qs = xb + (kQ5 ? offsetof(BlockQ5K, qs) : offsetof(BlockQ4K, qs));
        [[maybe_unused]] const std::uint8_t* qhp = xb + offsetof(BlockQ5K, qh);
        const std::uint16_t d16 = kq_ld_u16(xb + offsetof(BlockQ4K, d));
        const std::uint16_t dmin16 = kq_ld_u16(xb + offsetof(BlockQ4K, dmin));
        const float dy = kq_ld_f32(yb);
        const __m128i sm = unpack_scales_k4(scales);
        const __m256i prod_m = mins_dot_bsums(sm, (yb + offsetof(BlockQ8K, bsums)));
        acc_m = _mm256_fmadd_ps(_mm256_set1_ps(dy * fp16(dmin16)), _mm256_cvtepi32_ps(prod_m), acc_m);

        const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
        const std::uint8_t* a = yb + offsetof(BlockQ8K, qs);
        __m256i qh;
        if constexpr (kQ5) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp));
        __m256i sumi = _mm256_setzero_si256();
        for (int k = 0; k < 4; ++k) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * k));
            __m256i lo = _mm256_and_si256(q, m4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            if constexpr (kQ5) {  // bit 2k of qh -> bit 4 of lo, bit 2k+1 -> bit 4 of hi
                lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(qh, 4), bit4));
                hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(qh, 3), bit4));
                qh = _mm256_srli_epi16(qh, 2);
            }
            const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64 * k));
            const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64 * k + 32));
            sumi = madd_acc<kVnni>(sumi, _mm256_maddubs_epi16(lo, a0), _mm256_shuffle_epi8(sc, ctl[2 * k]));
            sumi = madd_acc<kVnni>(sumi, _mm256_maddubs_epi16(hi, a1), _mm256_shuffle_epi8(sc, ctl[2 * k + 1]));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * fp16(d16)), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum_ps(acc) - hsum_ps(acc_m);
}

/// Controls that broadcast word `lo` in the low 128-bit lane and word `hi` in the high lane.
inline __m256i word_bcast2(int lo, int hi) {
    return _mm256_setr_m128i(_mm_set1_epi16(static_cast<short>(0x0100 + 0x0202 * lo)),
                             _mm_set1_epi16(static_cast<short>(0x0100 + 0x0202 * hi)));
}

template <bool kVnni>
float dot_q6_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* x0 = static_cast<const std::uint8_t*>(vx);
    const auto* y0 = static_cast<const std::uint8_t*>(vy);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i m30 = _mm256_set1_epi8(0x30);
    const __m256i ctl[4] = {word_bcast2(0, 1), word_bcast2(2, 3), word_bcast2(4, 5), word_bcast2(6, 7)};
    __m256 acc = _mm256_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        const std::uint8_t* xb = x0 + static_cast<std::size_t>(i) * sizeof(BlockQ6K);
        const std::uint8_t* yb = y0 + static_cast<std::size_t>(i) * sizeof(BlockQ8K);
        const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(xb + offsetof(BlockQ6K, scales)));
        const __m256i sc16 = _mm256_cvtepi8_epi16(sc8);
        // -32 offset of every q: sum_j sc[j] * bsums[j] * 32, subtracted up front.
        const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yb + offsetof(BlockQ8K, bsums)));
        __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(),
                                        _mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5));
        const std::uint8_t* ql = xb + offsetof(BlockQ6K, ql);
        const std::uint8_t* qhp = xb + offsetof(BlockQ6K, qh);
        const std::uint8_t* a = yb + offsetof(BlockQ8K, qs);
        for (int h = 0; h < 2; ++h, ql += 64, qhp += 32, a += 128) {
            const __m256i sc = _mm256_broadcastsi128_si256(h == 0 ? _mm256_castsi256_si128(sc16)
                                                                  : _mm256_extracti128_si256(sc16, 1));
            const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
            const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp));
            const __m256i q1 = _mm256_or_si256(_mm256_and_si256(l0, m4),
                                               _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
            const __m256i q2 = _mm256_or_si256(_mm256_and_si256(l1, m4),
                                               _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
            const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                               _mm256_and_si256(qh, m30));
            const __m256i q4 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                               _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
            const auto* av = reinterpret_cast<const __m256i*>(a);
            sumi = madd_acc<kVnni>(sumi, _mm256_maddubs_epi16(q1, _mm256_loadu_si256(av + 0)),
                                   _mm256_shuffle_epi8(sc, ctl[0]));
            sumi = madd_acc<kVnni>(sumi, _mm256_maddubs_epi16(q2, _mm256_loadu_si256(av + 1)),
                                   _mm256_shuffle_epi8(sc, ctl[1]));
            sumi = madd_acc<kVnni>(sumi, _mm256_maddubs_epi16(q3, _mm256_loadu_si256(av + 2)),
                                   _mm256_shuffle_epi8(sc, ctl[2]));
            sumi = madd_acc<kVnni>(sumi, _mm256_maddubs_epi16(q4, _mm256_loadu_si256(av + 3)),
                                   _mm256_shuffle_epi8(sc, ctl[3]));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(kq_ld_f32(yb) * fp16(kq_ld_u16(xb + offsetof(BlockQ6K, d)))), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum_ps(acc);
}

/// Multi-token twins of dot_q45_k / dot_q6_k for the tiles: one weight row against NT
/// activation rows (a_stride bytes apart), each unpacked 32-byte group used NT times. The int32
/// lanes and float operations are those of the single-token kernels, so results are identical.
template <bool kVnni, bool kQ5, int NT>
void dot_q45_k_multi(std::int64_t n, const void* vx, const std::uint8_t* a, std::size_t a_stride, float* out) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i bit4 = _mm256_set1_epi8(0x10);
    __m256 acc[NT], acc_m[NT];
    for (int t = 0; t < NT; ++t) acc[t] = acc_m[t] = _mm256_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        const std::uint8_t* xb = static_cast<const std::uint8_t*>(vx) +
                                 static_cast<std::size_t>(i) * (kQ5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K));
        const std::uint8_t* scales = xb + offsetof(BlockQ4K, scales);
        const std::uint8_t* qs = xb + (kQ5 ? offsetof(BlockQ5K, qs) : offsetof(BlockQ4K, qs));
        [[maybe_unused]] const std::uint8_t* qhp = xb + offsetof(BlockQ5K, qh);
        const std::uint16_t d16 = kq_ld_u16(xb + offsetof(BlockQ4K, d));
        const std::uint16_t dmin16 = kq_ld_u16(xb + offsetof(BlockQ4K, dmin));
        const float d = fp16(d16), dmin = fp16(dmin16);
        const __m128i sm = unpack_scales_k4(scales);
        const __m256i sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
        const std::uint8_t* y[NT];  // Q8_K block i of each token
        for (int t = 0; t < NT; ++t) {
            y[t] = a + static_cast<std::size_t>(t) * a_stride + static_cast<std::size_t>(i) * sizeof(BlockQ8K);
            acc_m[t] = _mm256_fmadd_ps(_mm256_set1_ps(kq_ld_f32(y[t]) * dmin),
                                       _mm256_cvtepi32_ps(mins_dot_bsums(sm, (y[t] + offsetof(BlockQ8K, bsums)))), acc_m[t]);
        }
        __m256i qh;
        if constexpr (kQ5) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qhp));
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
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(kq_ld_f32(y[t]) * d), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = hsum_ps(acc[t]) - hsum_ps(acc_m[t]);
}

template <bool kVnni, int NT>
void dot_q6_k_multi(std::int64_t n, const void* vx, const std::uint8_t* a, std::size_t a_stride, float* out) {
    const auto* x0 = static_cast<const std::uint8_t*>(vx);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i m30 = _mm256_set1_epi8(0x30);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        const std::uint8_t* xb = x0 + static_cast<std::size_t>(i) * sizeof(BlockQ6K);
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
            q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
            q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
            q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_and_si256(qh, m30));
            q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4),
                                   _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
            for (int g = 0; g < 4; ++g) {
                const __m256i s = _mm256_shuffle_epi8(sc, word_bcast2(2 * g, 2 * g + 1));
                for (int t = 0; t < NT; ++t) {
                    const auto* av = reinterpret_cast<const __m256i*>((y[t] + offsetof(BlockQ8K, qs)) + 128 * h + 32 * g);
                    sumi[t] = madd_acc<kVnni>(sumi[t], _mm256_maddubs_epi16(q[g], _mm256_loadu_si256(av)), s);
                }
            }
        }
        for (int t = 0; t < NT; ++t) {
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(kq_ld_f32(y[t]) * fp16(kq_ld_u16(xb + offsetof(BlockQ6K, d)))), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = hsum_ps(acc[t]);
}

using MultiDot = void (*)(std::int64_t, const void*, const std::uint8_t*, std::size_t, float*);
using SingleDot = float (*)(std::int64_t, const void*, const void*);

/// y[t * ldy + r] for all rows and tokens: groups of 4 tokens, then 3 or 2, a last single
/// token through the single-token kernel.
inline void tile(const MultiDot* multi /* NT 2..4 */, SingleDot single, std::int64_t n, const void* w,
                 std::size_t w_stride, std::int64_t n_w, const void* a, std::size_t a_stride,
                 std::int64_t n_a, float* y, std::int64_t ldy) {
    const auto* wb = static_cast<const std::uint8_t*>(w);
    const auto* ab = static_cast<const std::uint8_t*>(a);
    for (std::int64_t r = 0; r < n_w; ++r) {
        const std::uint8_t* wr = wb + static_cast<std::size_t>(r) * w_stride;
        for (std::int64_t t = 0; t < n_a; t += 4) {
            const std::int64_t nt = n_a - t < 4 ? n_a - t : 4;
            const std::uint8_t* at = ab + static_cast<std::size_t>(t) * a_stride;
            if (nt == 1) {
                y[t * ldy + r] = single(n, wr, at);
                continue;
            }
            float out[4];
            multi[nt - 2](n, wr, at, a_stride, out);
            for (std::int64_t j = 0; j < nt; ++j) y[(t + j) * ldy + r] = out[j];
        }
    }
}

template <bool kVnni>
struct Multi {
    static constexpr MultiDot q4[3] = {dot_q45_k_multi<kVnni, false, 2>, dot_q45_k_multi<kVnni, false, 3>,
                                       dot_q45_k_multi<kVnni, false, 4>};
    static constexpr MultiDot q5[3] = {dot_q45_k_multi<kVnni, true, 2>, dot_q45_k_multi<kVnni, true, 3>,
                                       dot_q45_k_multi<kVnni, true, 4>};
    static constexpr MultiDot q6[3] = {dot_q6_k_multi<kVnni, 2>, dot_q6_k_multi<kVnni, 3>, dot_q6_k_multi<kVnni, 4>};
};

}  // namespace

float vec_dot_q4_k_q8_k_avx2(std::int64_t n, const void* x, const void* y) { return dot_q45_k<false, false>(n, x, y); }
float vec_dot_q5_k_q8_k_avx2(std::int64_t n, const void* x, const void* y) { return dot_q45_k<false, true>(n, x, y); }
float vec_dot_q6_k_q8_k_avx2(std::int64_t n, const void* x, const void* y) { return dot_q6_k<false>(n, x, y); }
float vec_dot_q4_k_q8_k_avx2_vnni(std::int64_t n, const void* x, const void* y) { return dot_q45_k<true, false>(n, x, y); }
float vec_dot_q5_k_q8_k_avx2_vnni(std::int64_t n, const void* x, const void* y) { return dot_q45_k<true, true>(n, x, y); }
float vec_dot_q6_k_q8_k_avx2_vnni(std::int64_t n, const void* x, const void* y) { return dot_q6_k<true>(n, x, y); }

}  // namespace ember::kernels

namespace ember::kernels {

#define EMBER_KQ_TILE(name, table, single)                                                          \
    void name(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w, const void* a, \
              std::size_t a_stride, std::int64_t n_a, float* y, std::int64_t ldy) {                 \
        tile(table, single, n, w, w_stride, n_w, a, a_stride, n_a, y, ldy);                        \
    }
EMBER_KQ_TILE(tile_q4_k_q8_k_avx2, Multi<false>::q4, vec_dot_q4_k_q8_k_avx2)
EMBER_KQ_TILE(tile_q5_k_q8_k_avx2, Multi<false>::q5, vec_dot_q5_k_q8_k_avx2)
EMBER_KQ_TILE(tile_q6_k_q8_k_avx2, Multi<false>::q6, vec_dot_q6_k_q8_k_avx2)
EMBER_KQ_TILE(tile_q4_k_q8_k_avx2_vnni, Multi<true>::q4, vec_dot_q4_k_q8_k_avx2_vnni)
EMBER_KQ_TILE(tile_q5_k_q8_k_avx2_vnni, Multi<true>::q5, vec_dot_q5_k_q8_k_avx2_vnni)
EMBER_KQ_TILE(tile_q6_k_q8_k_avx2_vnni, Multi<true>::q6, vec_dot_q6_k_q8_k_avx2_vnni)
#undef EMBER_KQ_TILE

}  // namespace ember::kernels

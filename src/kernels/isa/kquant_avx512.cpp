// AVX-512 (BW + VNNI) K-quant x Q8_K dot products and tiles. A superblock is four 64-value groups, each
// one zmm: the 32 packed bytes are broadcast to both 256-bit halves and shifted per half so the
// unpacked values line up with 64 contiguous activations (no activation shuffles). int16 pair
// products are scaled and accumulated in one vpdpwssd; the min / -32 terms use the bsums.
// The tile kernels unpack each weight superblock once for up to 4 activation rows (prefill).
// Kernel code only: raw pointers, intrinsics, internal-linkage helpers.
// GCC 12's AVX-512 headers build "undefined" vectors as `__m512i __Y = __Y;`, which trips
// -W(maybe-)uninitialized on every masked-out intrinsic: a known false positive.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <cstddef>
#include <cstdint>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/tile_sweep-inl.hpp"
#include "kernels/isa/x86_common-inl.hpp"
#include "kernels/kquant_blocks.hpp"

namespace ember::kernels {
namespace {

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

/// Dot products of one weight row with NT activation rows (a, a + a_stride, ...): each weight
/// superblock is unpacked once and used NT times. NT == 1 is vec_dot.
template <bool kQ5, int NT>
void dot_q45_k(std::int64_t n, const void* vx, const std::uint8_t* a, std::size_t a_stride, float* out) {
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
    __m512 acc[NT];
    __m256 acc_m[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm512_setzero_ps();
        acc_m[t] = _mm256_setzero_ps();
    }
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        constexpr std::size_t kBlockBytes = kQ5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K);
        prefetch_ahead<kBlockBytes>(static_cast<const std::uint8_t*>(vx) + static_cast<std::size_t>(i) * kBlockBytes);
        const KHead<kQ5> head(vx, i);
        const std::uint8_t* qs = head.qs;
        const __m128i sm = head.sm;
        const __m512i sc = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(sm));
        __m512i qh;
        if constexpr (kQ5) qh = bcast256(head.qh);
        __m512i q[4], s[4];
        for (int k = 0; k < 4; ++k) {
            q[k] = _mm512_and_si512(_mm512_srlv_epi64(bcast256(qs + 32 * k), nib_shift), m4);
            if constexpr (kQ5) {
                q[k] = _mm512_ternarylogic_epi64(q[k], _mm512_rolv_epi64(qh, qh_rot[k]), bit4, 0xF8);  // q | (h & 0x10)
            }
            s[k] = _mm512_shuffle_epi8(sc, ctl[k]);
        }
        for (int t = 0; t < NT; ++t) {
            const std::uint8_t* y = a + static_cast<std::size_t>(t) * a_stride + static_cast<std::size_t>(i) * sizeof(BlockQ8K);
            const float dy = kq_ld_f32(y);
            acc_m[t] = _mm256_fmadd_ps(_mm256_set1_ps(dy * head.dmin),
                                       _mm256_cvtepi32_ps(mins_dot_bsums(sm, (y + offsetof(BlockQ8K, bsums)))), acc_m[t]);
            const auto* av = reinterpret_cast<const __m512i*>(y + offsetof(BlockQ8K, qs));
            __m512i sumi = _mm512_setzero_si512();
            for (int k = 0; k < 4; ++k) {
                sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(q[k], _mm512_loadu_si512(av + k)), s[k]);
            }
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(dy * head.d), _mm512_cvtepi32_ps(sumi), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) - hsum_ps(acc_m[t]);
}

template <int NT>
void dot_q6_k(std::int64_t n, const void* vx, const std::uint8_t* a, std::size_t a_stride, float* out) {
    const auto* x0 = static_cast<const std::uint8_t*>(vx);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i m30 = _mm512_set1_epi8(0x30);
    // Group 0 of a half: values 0..31 take qh bits 0-1 (<<4), 32..63 bits 2-3 (<<2).
    // Group 1: values 64..95 bits 4-5 (as is), 96..127 bits 6-7 (>>2). Rotates per 64-bit lane.
    const __m512i qh_rot0 = _mm512_set_epi64(2, 2, 2, 2, 4, 4, 4, 4);
    const __m512i qh_rot1 = _mm512_set_epi64(62, 62, 62, 62, 0, 0, 0, 0);
    // Scale words per 128-bit lane (16 values each): group g (64 values) uses scales 4g+lane.
    __m512i sc_idx[4];
    for (int g = 0; g < 4; ++g) {
        alignas(64) short idx[32];
        for (int w = 0; w < 32; ++w) idx[w] = static_cast<short>(4 * g + w / 8);
        sc_idx[g] = _mm512_load_si512(idx);
    }
    __m512 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    const std::int64_t nb = n / kQK_K;
    for (std::int64_t i = 0; i < nb; ++i) {
        const std::uint8_t* xb = x0 + static_cast<std::size_t>(i) * sizeof(BlockQ6K);
        prefetch_ahead<sizeof(BlockQ6K)>(xb);
        const __m256i sc16 = _mm256_cvtepi8_epi16(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(xb + offsetof(BlockQ6K, scales))));
        const __m512i scz = _mm512_zextsi256_si512(sc16);
        __m512i q[4], s[4];
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512((xb + offsetof(BlockQ6K, ql)) + 64 * h);
            const __m512i qh = bcast256((xb + offsetof(BlockQ6K, qh)) + 32 * h);
            q[2 * h] = _mm512_ternarylogic_epi64(
                _mm512_and_si512(ql, m4), _mm512_rolv_epi64(qh, qh_rot0), m30, 0xF8);
            q[2 * h + 1] = _mm512_ternarylogic_epi64(
                _mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), _mm512_rolv_epi64(qh, qh_rot1), m30, 0xF8);
        }
        for (int g = 0; g < 4; ++g) s[g] = _mm512_permutexvar_epi16(sc_idx[g], scz);
        const float d = h2f(kq_ld_u16(xb + offsetof(BlockQ6K, d)));
        for (int t = 0; t < NT; ++t) {
            const std::uint8_t* y = a + static_cast<std::size_t>(t) * a_stride + static_cast<std::size_t>(i) * sizeof(BlockQ8K);
            // -32 offset of every q: sum_j sc[j] * bsums[j] * 32, subtracted up front.
            const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + offsetof(BlockQ8K, bsums)));
            const __m256i bias = _mm256_slli_epi32(_mm256_madd_epi16(bs, sc16), 5);
            __m512i sumi = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_zextsi256_si512(bias));
            const auto* av = reinterpret_cast<const __m512i*>(y + offsetof(BlockQ8K, qs));
            for (int g = 0; g < 4; ++g) {
                sumi = _mm512_dpwssd_epi32(sumi, _mm512_maddubs_epi16(q[g], _mm512_loadu_si512(av + g)), s[g]);
            }
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(kq_ld_f32(y) * d), _mm512_cvtepi32_ps(sumi), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = _mm512_reduce_add_ps(acc[t]);
}

constexpr MultiDot kQ4[4] = {dot_q45_k<false, 1>, dot_q45_k<false, 2>, dot_q45_k<false, 3>, dot_q45_k<false, 4>};
constexpr MultiDot kQ5[4] = {dot_q45_k<true, 1>, dot_q45_k<true, 2>, dot_q45_k<true, 3>, dot_q45_k<true, 4>};
constexpr MultiDot kQ6[4] = {dot_q6_k<1>, dot_q6_k<2>, dot_q6_k<3>, dot_q6_k<4>};

}  // namespace

namespace avx512 {
float vec_dot_q4_k(std::int64_t n, const void* x, const void* y) { return dot1(kQ4[0], n, x, y); }
float vec_dot_q5_k(std::int64_t n, const void* x, const void* y) { return dot1(kQ5[0], n, x, y); }
float vec_dot_q6_k(std::int64_t n, const void* x, const void* y) { return dot1(kQ6[0], n, x, y); }
void tile_q4_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a, std::size_t as,
               std::int64_t n_a, float* y, std::int64_t ldy) {
    sweep_rows_by4(kQ4, n, w, ws, n_w, a, as, n_a, y, ldy);
}
void tile_q5_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a, std::size_t as,
               std::int64_t n_a, float* y, std::int64_t ldy) {
    sweep_rows_by4(kQ5, n, w, ws, n_w, a, as, n_a, y, ldy);
}
void tile_q6_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a, std::size_t as,
               std::int64_t n_a, float* y, std::int64_t ldy) {
    sweep_rows_by4(kQ6, n, w, ws, n_w, a, as, n_a, y, ldy);
}
}  // namespace avx512
}  // namespace ember::kernels

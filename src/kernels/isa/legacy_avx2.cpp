// AVX2 + FMA + F16C kernels of the legacy blocks (Haswell and later; no VNNI, so the path runs on
// every AVX2 CPU). Integer block dots: maddubs(unsigned quants, signed activations) -
// maddubs(offset, activations) in int16 (exact: |sum| <= 2*31*127), widened by madd; Q8_0 uses
// the sign trick. Kernel code only.
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/legacy_blocks.hpp"
#include "kernels/isa/tile_sweep-inl.hpp"
#include "kernels/isa/x86_common-inl.hpp"

namespace ember::kernels {
namespace {

// 0x10 in byte j where bit j of qh is set.
inline __m256i fifth_bits(const std::uint8_t* qhp) {
    std::uint32_t qh;
    __builtin_memcpy(&qh, qhp, 4);
    const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), shuf);
    b = _mm256_or_si256(b, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfeLL));
    b = _mm256_cmpeq_epi8(b, _mm256_set1_epi64x(-1));
    return _mm256_and_si256(b, _mm256_set1_epi8(0x10));
}

// Quants of one weight block as bytes (unsigned for 4/5-bit kinds, signed for Q8_0).
template <int K> inline __m256i load_quants(const typename Legacy<K>::W& b) {
    if constexpr (K == kQ8_0) {
        return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
    } else if constexpr (Legacy<K>::five) {
        return _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh));
    } else {
        return nibbles(b.qs);
    }
}

template <int K>
struct Micro {
    // R weight rows x T activation rows over nb blocks; y[t * ldy + r].
    template <int R, int T>
    static void run(std::int64_t nb, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                    std::size_t as, float* y, std::int64_t ldy) {
        using WB = typename Legacy<K>::W;
        using AB = typename Legacy<K>::A;
        constexpr bool kOffset = K != kQ8_0 && Legacy<K>::offset != 0;
        const __m256i ones = _mm256_set1_epi16(1);
        const __m256i off = _mm256_set1_epi8(static_cast<char>(Legacy<K>::offset));
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
                if constexpr (Legacy<K>::min) mw[r] = h2f(blk.m);
            }
            for (int t = 0; t < T; ++t) {
                const AB& ab = reinterpret_cast<const AB*>(a + t * as)[b];
                const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ab.qs));
                const float da = h2f(ab.d);
                __m256i corr = _mm256_setzero_si256();
                if constexpr (kOffset) corr = _mm256_maddubs_epi16(off, qy);
                for (int r = 0; r < R; ++r) {
                    __m256i p;
                    if constexpr (K == kQ8_0) {
                        p = _mm256_maddubs_epi16(_mm256_sign_epi8(q[r], q[r]), _mm256_sign_epi8(qy, q[r]));
                    } else {
                        p = _mm256_maddubs_epi16(q[r], qy);
                        if constexpr (kOffset) p = _mm256_sub_epi16(p, corr);
                    }
                    const __m256 s = _mm256_cvtepi32_ps(_mm256_madd_epi16(p, ones));
                    acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(dw[r] * da), s, acc[r][t]);
                    if constexpr (Legacy<K>::min) macc[r][t] += mw[r] * h2f(ab.s);
                }
            }
        }
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum_ps(acc[r][t]) + macc[r][t];
    }
};

}  // namespace

namespace avx2 {
EMBER_LEGACY_EXPORTS(Micro, 4, 2)
}  // namespace avx2
}  // namespace ember::kernels

// AVX-512 (F/BW/VL/DQ + VNNI) kernels of the legacy blocks: two 32-value blocks per 512-bit
// register, integer dots by vpdpbusd on unsigned quants (Q8_0 weights biased by +128), the bias
// removed once per activation block: sum((q - off) * y) = dpbusd(-dpbusd(off, y), q, y).
// Kernel code only.
// GCC 12 reports _mm512_undefined_* inside cast/insert intrinsics as uninitialized (false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/legacy_blocks.hpp"
#include "kernels/isa/tile_sweep-inl.hpp"
#include "kernels/isa/x86_common-inl.hpp"

namespace ember::kernels {
namespace {

inline __m256i fifth_bits(const std::uint8_t* qhp) {
    std::uint32_t qh;
    __builtin_memcpy(&qh, qhp, 4);
    return _mm256_maskz_set1_epi8(static_cast<__mmask32>(qh), 0x10);
}

// Unsigned quants of one weight block.
template <int K> inline __m256i load_quants(const typename Legacy<K>::W& b) {
    if constexpr (K == kQ8_0) {
        return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)),
                                _mm256_set1_epi8(static_cast<char>(0x80)));
    } else if constexpr (Legacy<K>::five) {
        return _mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh));
    } else {
        return nibbles(b.qs);
    }
}

inline __m512i join(__m256i lo, __m256i hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}
inline __m512 join(float lo, float hi) {
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(lo)), _mm256_set1_ps(hi), 1);
}

template <int K>
struct Micro {
    template <int R, int T>
    static void run(std::int64_t nb, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                    std::size_t as, float* y, std::int64_t ldy) {
        using WB = typename Legacy<K>::W;
        using AB = typename Legacy<K>::A;
        const __m512i off = _mm512_set1_epi8(static_cast<char>(Legacy<K>::offset));
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
                if constexpr (Legacy<K>::min) {
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
                if constexpr (Legacy<K>::offset != 0) {
                    init = _mm512_sub_epi32(init, _mm512_dpbusd_epi32(_mm512_setzero_si512(), off, qy));
                }
                float s0 = 0.0f, s1 = 0.0f;
                if constexpr (Legacy<K>::min) {
                    s0 = h2f(ab[0].s);
                    s1 = two ? h2f(ab[1].s) : 0.0f;
                }
                for (int r = 0; r < R; ++r) {
                    const __m512i i = _mm512_dpbusd_epi32(init, q[r], qy);
                    acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(dw[r], da), _mm512_cvtepi32_ps(i), acc[r][t]);
                    if constexpr (Legacy<K>::min) macc[r][t] += m0[r] * s0 + m1[r] * s1;
                }
            }
        }
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]) + macc[r][t];
    }
};

}  // namespace

namespace avx512 {
EMBER_LEGACY_EXPORTS(Micro, 4, 4)
}  // namespace avx512
}  // namespace ember::kernels

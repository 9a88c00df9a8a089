// Float kernels for AVX-512 (F/BW/DQ), from the xsimd templates in float_kernels-inl.hpp and
// float_gemm-inl.hpp, and the BF16 GEMM on vdpbf16ps (AVX512_BF16), which xsimd cannot express.
// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on masked intrinsics (false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/isa/float_gemm-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"

namespace ember::kernels::avx512 {
EMBER_FLOAT_EXPORTS(xsimd::avx512bw)
EMBER_FLOAT_GEMM_EXPORTS(xsimd::avx512bw)

namespace {

/// One R x T tile of BF16 rows on vdpbf16ps: 32 bf16 pairs per instruction into 16 fp32 lanes
/// (products and sums rounded as the instruction defines). As in FloatMicro, each (row, token)
/// pair is one accumulator over the 32-element chunks in order, then one horizontal sum, so the
/// result does not depend on the tile shape (batch invariance).
struct Bf16DpMicro : SpanMicro<Bf16DpMicro> {
    using Acc = __m512;
    static constexpr std::int64_t kStep = 32;
    static constexpr std::size_t kWeightBytes = 2;
    static Acc zero() { return _mm512_setzero_ps(); }

    template <int R, int T>
    [[gnu::always_inline]] static void step(std::int64_t i, const std::uint8_t* w, std::size_t ws,
                                            const std::uint8_t* a, std::size_t as, Acc (&c)[R][T]) {
        __m512bh wv[R];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) wv[r] = (__m512bh)_mm512_loadu_si512(w + r * ws + 2 * i);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
            const __m512bh xv = (__m512bh)_mm512_loadu_si512(a + t * as + 2 * i);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) c[r][t] = _mm512_dpbf16_ps(c[r][t], wv[r], xv);
        }
    }

    template <int R, int T>
    static void finish(std::int64_t n, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                       std::size_t as, Acc (&acc)[R][T], float* y, std::int64_t ldy) {
        const std::int64_t i = n / kStep * kStep;
        if (i < n) {  // zero-padded tail: masked loads
            const __mmask32 m = static_cast<__mmask32>((1u << (n - i)) - 1u);
            for (int r = 0; r < R; ++r) {
                const __m512bh wv = (__m512bh)_mm512_maskz_loadu_epi16(m, w + r * ws + 2 * i);
                for (int t = 0; t < T; ++t) {
                    acc[r][t] = _mm512_dpbf16_ps(acc[r][t], wv, (__m512bh)_mm512_maskz_loadu_epi16(m, a + t * as + 2 * i));
                }
            }
        }
        for (int t = 0; t < T; ++t) {
            if constexpr (R == 4) {
                store_sums4_avx512<false>(acc[0][t], acc[1][t], acc[2][t], acc[3][t], y + t * ldy);  // reduce_add's order
            } else {
                for (int r = 0; r < R; ++r) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
            }
        }
    }
};

}  // namespace

float vec_dot_bf16_dp(std::int64_t n, const void* w, const void* a) { return float_dot<Bf16DpMicro>(n, w, a); }
EMBER_TILE_SIGNATURE(tile_bf16_dp) {
    float_tile<Bf16DpMicro, xsimd::avx512bw>(n, w, w_stride, n_w, a, a_stride, n_a, y, ldy);
}

}  // namespace ember::kernels::avx512

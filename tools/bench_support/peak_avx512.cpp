// AVX-512 peak loops: vpdpbusd, vfmadd and vdpbf16ps on zmm over 12 independent accumulators
// (two ports x latency up to 6). Kernel code only.
#include <immintrin.h>

#include "bench_support/peak.hpp"

namespace ember::kernels {

#define EMBER_PEAK_12(OP) \
    OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)

std::int64_t peak_int8_avx512(std::int64_t iters, std::int32_t* sink) noexcept {
    const __m512i a = _mm512_set1_epi8(static_cast<char>(*sink | 1));
    const __m512i b = _mm512_set1_epi8(3);
#define DECL(i) __m512i acc##i = _mm512_set1_epi32(i + 1);  // distinct: equal chains are merged into one
    EMBER_PEAK_12(DECL)
#undef DECL
    for (std::int64_t it = 0; it < iters; ++it) {
#define STEP(i) acc##i = _mm512_dpbusd_epi32(acc##i, a, b);
        EMBER_PEAK_12(STEP)
#undef STEP
    }
    __m512i s = _mm512_setzero_si512();
#define SUM(i) s = _mm512_add_epi32(s, acc##i);
    EMBER_PEAK_12(SUM)
#undef SUM
    alignas(64) std::int32_t lanes[16];
    _mm512_store_si512(lanes, s);
    std::uint32_t total = 0;  // wraps, as the lanes do (a sum of ints would overflow)
    for (const std::int32_t lane : lanes) total += static_cast<std::uint32_t>(lane);
    *sink = static_cast<std::int32_t>(total);
    return iters * 12 * 64 * 2;
}

// 12 f32 chains acc0..acc11 (from 1..12), each stepped `iters` times by STEP(i); the sum of their
// lanes goes to *sink so the loop cannot be dropped.
#define EMBER_F32_DECL(i) __m512 acc##i = _mm512_set1_ps(static_cast<float>(i + 1));
#define EMBER_F32_SUM(i) s = _mm512_add_ps(s, acc##i);
#define EMBER_PEAK_F32_CHAINS(STEP)                                      \
    EMBER_PEAK_12(EMBER_F32_DECL)                                        \
    for (std::int64_t it = 0; it < iters; ++it) {                        \
        EMBER_PEAK_12(STEP)                                              \
    }                                                                    \
    __m512 s = _mm512_setzero_ps();                                      \
    EMBER_PEAK_12(EMBER_F32_SUM)                                         \
    alignas(64) float lanes[16];                                         \
    _mm512_store_ps(lanes, s);                                           \
    *sink = lanes[0] + lanes[15];

std::int64_t peak_f32_avx512(std::int64_t iters, float* sink) noexcept {
    const __m512 m = _mm512_set1_ps(*sink * 0.0f + 0.999999f);
    const __m512 c = _mm512_set1_ps(1e-7f);
#define STEP(i) acc##i = _mm512_fmadd_ps(acc##i, m, c);
    EMBER_PEAK_F32_CHAINS(STEP)
#undef STEP
    return iters * 12 * 16 * 2;
}

std::int64_t peak_bf16_avx512(std::int64_t iters, float* sink) noexcept {
    const __m512bh w = (__m512bh)_mm512_set1_epi16(static_cast<short>(0x3a83));  // bf16 ~0.001
    const __m512bh x = (__m512bh)_mm512_set1_epi16(static_cast<short>(*sink > 2.0f ? 0x3f80 : 0x3f00));
#define STEP(i) acc##i = _mm512_dpbf16_ps(acc##i, w, x);
    EMBER_PEAK_F32_CHAINS(STEP)
#undef STEP
    return iters * 12 * 32 * 2;
}

#undef EMBER_PEAK_F32_CHAINS
#undef EMBER_F32_SUM
#undef EMBER_F32_DECL
#undef EMBER_PEAK_12

}  // namespace ember::kernels

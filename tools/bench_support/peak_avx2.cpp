// AVX2 peak loops: 12 independent accumulator chains, enough to hide the latency of
// vpdpbusd / vfmadd on two ports. Kernel code only.
#include <immintrin.h>

#include "bench_support/peak.hpp"

namespace ember::kernels {
namespace {

inline std::int32_t hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

}  // namespace

#define EMBER_PEAK_12(OP) \
    OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)

// vpmaddubsw with its pair sums added in int16, as the packed kernels do for several chunks
// before one vpmaddwd widens them (a vpmaddwd per vpmaddubsw, the row kernels' form, took
// the multiply ports twice and gave half this peak, which the packed kernels then exceeded).
std::int64_t peak_int8_avx2(std::int64_t iters, std::int32_t* sink) noexcept {
    const __m256i b = _mm256_set1_epi8(static_cast<char>(*sink | 1));
#define DECL(i) __m256i acc##i = _mm256_set1_epi32(i + 1);
    EMBER_PEAK_12(DECL)
#undef DECL
    for (std::int64_t it = 0; it < iters; ++it) {
// The accumulator feeds the next product, so nothing can be hoisted out of the loop.
#define STEP(i) acc##i = _mm256_add_epi16(acc##i, _mm256_maddubs_epi16(acc##i, b));
        EMBER_PEAK_12(STEP)
#undef STEP
    }
    __m256i s = _mm256_setzero_si256();
#define SUM(i) s = _mm256_add_epi32(s, acc##i);
    EMBER_PEAK_12(SUM)
#undef SUM
    *sink = hsum_epi32(s);
    return iters * 12 * 32 * 2;
}

std::int64_t peak_f32_avx2(std::int64_t iters, float* sink) noexcept {
    const __m256 m = _mm256_set1_ps(*sink * 0.0f + 0.999999f);
    const __m256 c = _mm256_set1_ps(1e-7f);
#define DECL(i) __m256 acc##i = _mm256_set1_ps(static_cast<float>(i + 1));
    EMBER_PEAK_12(DECL)
#undef DECL
    for (std::int64_t it = 0; it < iters; ++it) {
#define STEP(i) acc##i = _mm256_fmadd_ps(acc##i, m, c);
        EMBER_PEAK_12(STEP)
#undef STEP
    }
    __m256 s = _mm256_setzero_ps();
#define SUM(i) s = _mm256_add_ps(s, acc##i);
    EMBER_PEAK_12(SUM)
#undef SUM
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, s);
    *sink = lanes[0] + lanes[7];
    return iters * 12 * 8 * 2;
}

#undef EMBER_PEAK_12

}  // namespace ember::kernels

// AVX-VNNI peak loop (vpdpbusd on ymm): its own TU, the only one built with -mavxvnni, so no
// AVX-VNNI instruction can reach code that runs on CPUs without it. 12 accumulator chains.
#include <immintrin.h>

#include "bench_support/peak.hpp"

namespace ember::kernels {

#define EMBER_PEAK_12(OP) \
    OP(0) OP(1) OP(2) OP(3) OP(4) OP(5) OP(6) OP(7) OP(8) OP(9) OP(10) OP(11)

std::int64_t peak_int8_avx2_vnni(std::int64_t iters, std::int32_t* sink) noexcept {
    const __m256i a = _mm256_set1_epi8(static_cast<char>(*sink | 1));
    const __m256i b = _mm256_set1_epi8(3);
#define DECL(i) __m256i acc##i = _mm256_set1_epi32(i + 1);  // distinct: equal chains are merged into one
    EMBER_PEAK_12(DECL)
#undef DECL
    for (std::int64_t it = 0; it < iters; ++it) {
#define STEP(i) acc##i = _mm256_dpbusd_avx_epi32(acc##i, a, b);
        EMBER_PEAK_12(STEP)
#undef STEP
    }
    __m256i s = _mm256_setzero_si256();
#define SUM(i) s = _mm256_add_epi32(s, acc##i);
    EMBER_PEAK_12(SUM)
#undef SUM
    alignas(32) std::int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    std::uint32_t total = 0;  // wraps, as the lanes do (a sum of ints would overflow)
    for (const std::int32_t lane : lanes) total += static_cast<std::uint32_t>(lane);
    *sink = static_cast<std::int32_t>(total);
    return iters * 12 * 32 * 2;
}

}  // namespace ember::kernels

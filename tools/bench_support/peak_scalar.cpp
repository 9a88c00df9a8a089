// Scalar peak loops (baseline x86-64): independent multiply-add chains that the compiler cannot
// collapse (each step depends on the previous value through a multiply).
#include "bench_support/peak.hpp"

namespace ember::kernels {

std::int64_t peak_int8_scalar(std::int64_t iters, std::int32_t* sink) noexcept {
    std::int32_t a0 = 1, a1 = 2, a2 = 3, a3 = 4, a4 = 5, a5 = 6, a6 = 7, a7 = 8;
    const std::int32_t m = *sink | 3, c = 7;
    for (std::int64_t i = 0; i < iters; ++i) {
        a0 = a0 * m + c; a1 = a1 * m + c; a2 = a2 * m + c; a3 = a3 * m + c;
        a4 = a4 * m + c; a5 = a5 * m + c; a6 = a6 * m + c; a7 = a7 * m + c;
    }
    *sink = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    return iters * 8 * 2;
}

std::int64_t peak_f32_scalar(std::int64_t iters, float* sink) noexcept {
    float a0 = 1, a1 = 2, a2 = 3, a3 = 4, a4 = 5, a5 = 6, a6 = 7, a7 = 8;
    const float m = *sink * 0.0f + 0.999999f, c = 1e-7f;
    for (std::int64_t i = 0; i < iters; ++i) {
        a0 = a0 * m + c; a1 = a1 * m + c; a2 = a2 * m + c; a3 = a3 * m + c;
        a4 = a4 * m + c; a5 = a5 * m + c; a6 = a6 * m + c; a7 = a7 * m + c;
    }
    *sink = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    return iters * 8 * 2;
}

}  // namespace ember::kernels

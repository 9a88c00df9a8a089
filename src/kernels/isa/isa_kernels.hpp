// Declarations of the per-ISA kernels (definitions in legacy_<isa>.cpp / float_<isa>.cpp).
// Only dispatch.cpp and tests should need these; everything else goes through TypeKernels.
#pragma once

#include <cstddef>
#include <cstdint>

#define EMBER_DECLARE_LEGACY_KERNELS                                                            \
    float vec_dot_f32(std::int64_t n, const void* w, const void* a);                           \
    float vec_dot_f16(std::int64_t n, const void* w, const void* a);                           \
    float vec_dot_bf16(std::int64_t n, const void* w, const void* a);                          \
    float vec_dot_q4_0(std::int64_t n, const void* w, const void* a);                          \
    float vec_dot_q4_1(std::int64_t n, const void* w, const void* a);                          \
    float vec_dot_q5_0(std::int64_t n, const void* w, const void* a);                          \
    float vec_dot_q5_1(std::int64_t n, const void* w, const void* a);                          \
    float vec_dot_q8_0(std::int64_t n, const void* w, const void* a);                          \
    float dot(const float* a, const float* b, std::int64_t n);                                 \
    void axpy(float* y, float a, const float* x, std::int64_t n);

#define EMBER_DECLARE_TILE(name)                                                                \
    void name(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w,          \
              const void* a, std::size_t a_stride, std::int64_t n_a, float* y, std::int64_t ldy);

namespace ember::kernels {
namespace scalar {
EMBER_DECLARE_LEGACY_KERNELS
void swiglu(float* out, const float* gate, const float* up, std::int64_t n);
}
namespace avx2 {
EMBER_DECLARE_LEGACY_KERNELS
EMBER_DECLARE_TILE(tile_q4_0)
EMBER_DECLARE_TILE(tile_q4_1)
EMBER_DECLARE_TILE(tile_q5_0)
EMBER_DECLARE_TILE(tile_q5_1)
EMBER_DECLARE_TILE(tile_q8_0)
}
namespace avx512 {
EMBER_DECLARE_LEGACY_KERNELS
EMBER_DECLARE_TILE(tile_q4_0)
EMBER_DECLARE_TILE(tile_q4_1)
EMBER_DECLARE_TILE(tile_q5_0)
EMBER_DECLARE_TILE(tile_q5_1)
EMBER_DECLARE_TILE(tile_q8_0)
float vec_dot_bf16_dp(std::int64_t n, const void* w, const void* a);  // needs AVX512_BF16
void quantize_act_q8_0(const float* x, void* dst, std::int64_t n);    // identical bytes to scalar
void quantize_act_q8_1(const float* x, void* dst, std::int64_t n);
}
}  // namespace ember::kernels

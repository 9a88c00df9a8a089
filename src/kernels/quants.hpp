// Reference (scalar) quantization of the legacy ggml types and of the activation formats, and
// row dequantization. Weight quantizers round exactly like ggml's quantize_row_*_ref, so files we
// quantize match llama-quantize's. Activation quantizers follow what ggml's x86 CPU backend runs
// (quantize_row_q8_0/q8_1 AVX2 path: d = amax/127, q = round-half-even(x * (127/amax))), so our
// dot products see the same integers as llama.cpp.
#pragma once

#include <cstdint>

#include "gguf/tensor_type.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels {

// Weight quantizers (n a multiple of 32).
void quantize_row_q4_0(const float* x, BlockQ4_0* y, std::int64_t n) noexcept;
void quantize_row_q4_1(const float* x, BlockQ4_1* y, std::int64_t n) noexcept;
void quantize_row_q5_0(const float* x, BlockQ5_0* y, std::int64_t n) noexcept;
void quantize_row_q5_1(const float* x, BlockQ5_1* y, std::int64_t n) noexcept;
void quantize_row_q8_0(const float* x, BlockQ8_0* y, std::int64_t n) noexcept;  // roundf, like _ref

// Activation quantizers (signature of QuantizeActFn).
void quantize_act_f32(const float* x, void* dst, std::int64_t n);
void quantize_act_f16(const float* x, void* dst, std::int64_t n);
void quantize_act_bf16(const float* x, void* dst, std::int64_t n);
void quantize_act_q8_0(const float* x, void* dst, std::int64_t n);
void quantize_act_q8_1(const float* x, void* dst, std::int64_t n);

// Dequantizers (signature of DequantizeFn).
void dequantize_f32(const void* src, float* dst, std::int64_t n);
void dequantize_f16(const void* src, float* dst, std::int64_t n);
void dequantize_bf16(const void* src, float* dst, std::int64_t n);
void dequantize_q4_0(const void* src, float* dst, std::int64_t n);
void dequantize_q4_1(const void* src, float* dst, std::int64_t n);
void dequantize_q5_0(const void* src, float* dst, std::int64_t n);
void dequantize_q5_1(const void* src, float* dst, std::int64_t n);
void dequantize_q8_0(const void* src, float* dst, std::int64_t n);
void dequantize_q8_1(const void* src, float* dst, std::int64_t n);

/// Quantizes one row of n floats into `type` (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
/// Q4_K, Q5_K, Q6_K).
/// Throws ember::Error for other types or an n that is not a multiple of the block size.
void quantize_row(TensorType type, const float* x, void* dst, std::int64_t n);

}  // namespace ember::kernels

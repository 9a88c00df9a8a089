// K-quant weight types Q4_K, Q5_K, Q6_K and their activation partner Q8_K: reference
// quantizers (ggml's algorithms, so files match llama.cpp's) and dequantizers. The dot products
// per ISA are in isa/ and reach callers through the traits table. n is always the number of
// values, a multiple of kQK_K (256).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kquant_blocks.hpp"

namespace ember::kernels {

// --- Reference quantizers (deterministic; what model files are written with) ---------------
void quantize_row_q4_k(const float* x, BlockQ4K* y, std::int64_t n);
void quantize_row_q5_k(const float* x, BlockQ5K* y, std::int64_t n);
void quantize_row_q6_k(const float* x, BlockQ6K* y, std::int64_t n);
/// Activations: d = max/-127 of the signed value of largest magnitude, round to nearest.
void quantize_row_q8_k(const float* x, BlockQ8K* y, std::int64_t n);

// --- Dequantizers ---------------------------------------------------------------------------
void dequantize_row_q4_k(const BlockQ4K* x, float* y, std::int64_t n);
void dequantize_row_q5_k(const BlockQ5K* x, float* y, std::int64_t n);
void dequantize_row_q6_k(const BlockQ6K* x, float* y, std::int64_t n);
void dequantize_row_q8_k(const BlockQ8K* x, float* y, std::int64_t n);

}  // namespace ember::kernels

// K-quant weight types Q4_K, Q5_K, Q6_K and their activation partner Q8_K: reference
// quantizers (ggml's algorithms, so files match llama.cpp's), dequantizers and the dot products
// per ISA. n is always the number of values, a multiple of kQK_K (256).
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

// --- Dot products: sum_i w[i] * a[i] for a weight row x and a Q8_K activation row y ---------
// Signature of VecDotFn (x, y: block arrays at any alignment). Registered per ISA in
// kquant_registry.cpp; the scalar ones are the oracle.
float vec_dot_q4_k_q8_k_scalar(std::int64_t n, const void* x, const void* y);
float vec_dot_q5_k_q8_k_scalar(std::int64_t n, const void* x, const void* y);
float vec_dot_q6_k_q8_k_scalar(std::int64_t n, const void* x, const void* y);
// AVX2 + FMA + F16C (Haswell).
float vec_dot_q4_k_q8_k_avx2(std::int64_t n, const void* x, const void* y);
float vec_dot_q5_k_q8_k_avx2(std::int64_t n, const void* x, const void* y);
float vec_dot_q6_k_q8_k_avx2(std::int64_t n, const void* x, const void* y);
// AVX2 + AVX-VNNI (vpdpwssd on ymm); registered for Isa::avx2 when the CPU has AVX-VNNI.
float vec_dot_q4_k_q8_k_avx2_vnni(std::int64_t n, const void* x, const void* y);
float vec_dot_q5_k_q8_k_avx2_vnni(std::int64_t n, const void* x, const void* y);
float vec_dot_q6_k_q8_k_avx2_vnni(std::int64_t n, const void* x, const void* y);
// AVX-512 F/BW/VL/DQ/VNNI.
float vec_dot_q4_k_q8_k_avx512(std::int64_t n, const void* x, const void* y);
float vec_dot_q5_k_q8_k_avx512(std::int64_t n, const void* x, const void* y);
float vec_dot_q6_k_q8_k_avx512(std::int64_t n, const void* x, const void* y);
// Tiles (TileFn) for AVX2, AVX2 + AVX-VNNI and AVX-512: each weight superblock unpacked once for up to 4 activation rows;
// results bit-identical to the vec_dot above.
#define EMBER_KQ_DECLARE_TILE(name)                                                                 \
    void name(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w, const void* a, \
              std::size_t a_stride, std::int64_t n_a, float* y, std::int64_t ldy);
EMBER_KQ_DECLARE_TILE(tile_q4_k_q8_k_avx2)
EMBER_KQ_DECLARE_TILE(tile_q5_k_q8_k_avx2)
EMBER_KQ_DECLARE_TILE(tile_q6_k_q8_k_avx2)
EMBER_KQ_DECLARE_TILE(tile_q4_k_q8_k_avx2_vnni)
EMBER_KQ_DECLARE_TILE(tile_q5_k_q8_k_avx2_vnni)
EMBER_KQ_DECLARE_TILE(tile_q6_k_q8_k_avx2_vnni)
#undef EMBER_KQ_DECLARE_TILE
void tile_q4_k_q8_k_avx512(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w,
                           const void* a, std::size_t a_stride, std::int64_t n_a, float* y, std::int64_t ldy);
void tile_q5_k_q8_k_avx512(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w,
                           const void* a, std::size_t a_stride, std::int64_t n_a, float* y, std::int64_t ldy);
void tile_q6_k_q8_k_avx512(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w,
                           const void* a, std::size_t a_stride, std::int64_t n_a, float* y, std::int64_t ldy);

/// Whether this CPU has AVX-VNNI (the VEX-encoded int8/int16 dot products) on top of AVX2.
bool kquant_has_avxvnni() noexcept;

}  // namespace ember::kernels

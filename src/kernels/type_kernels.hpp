// The per-type kernel table and its registration point for K-quants (see docs/kernels-interface.md).
//
// A weight type's kernels: how to quantize float activations into its partner format (ggml's
// vec_dot_type), the dot product of one weight row with one activation row, an optional tile
// kernel computing many rows x many tokens at once, and row dequantization. Everything is plain
// function pointers so per-ISA translation units can provide them without templates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/tensor_type.hpp"

namespace ember::kernels {

enum class Isa : int { scalar = 0, avx2 = 1, avx512 = 2 };
constexpr int kIsaCount = 3;

/// Converts n floats (n a multiple of the activation block size) into activation blocks.
using QuantizeActFn = void (*)(const float* x, void* dst, std::int64_t n);
/// Dequantizes n elements (a multiple of the weight block size) of one weight row.
using DequantizeFn = void (*)(const void* src, float* dst, std::int64_t n);
/// Dot product of one weight row (n elements) with one activation row of the partner type.
using VecDotFn = float (*)(std::int64_t n, const void* w, const void* a);
/// y[t * ldy + r] = dot(weight row r, activation row t) for r < n_w, t < n_a. Rows are
/// w_stride / a_stride bytes apart. Must give the same values as VecDotFn up to rounding.
using TileFn = void (*)(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w,
                        const void* a, std::size_t a_stride, std::int64_t n_a, float* y,
                        std::int64_t ldy);

struct TypeKernels {
    TensorType type;        ///< Weight type.
    TensorType act_type;    ///< Activation format (F32, F16, BF16, Q8_0, Q8_1, Q8_K).
    QuantizeActFn quantize_act;  ///< Required. Output must be identical on every ISA.
    VecDotFn vec_dot;            ///< Required.
    TileFn tile;                 ///< Optional (nullptr: matmul loops over vec_dot).
    DequantizeFn dequantize;     ///< Required.
};

/// Kernels of `type` for `isa`, or nullptr when ember has none. Falls back to a lower ISA's
/// kernels for types that have no specific version. Implemented in dispatch.cpp.
const TypeKernels* type_kernels(TensorType type, Isa isa) noexcept;

/// Registration point for K-quant types (Q4_K, Q5_K, Q6_K, ... with Q8_K activations):
/// implemented in src/kernels/kquant_registry.cpp. Returns the kernels for exactly `isa`, or
/// nullptr when that ISA has no specific version (type_kernels then tries the next lower ISA)
/// or the type is not a K-quant. Must be cheap and thread-safe (return pointers to statics).
const TypeKernels* kquant_kernels(TensorType type, Isa isa) noexcept;

}  // namespace ember::kernels

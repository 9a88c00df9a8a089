// The traits table: one entry per (weight type, ISA) with everything matmul, the loader and the
// tools need to know about a weight type. Filled in one place (kernel_table.cpp); nothing
// outside the table branches on a weight type. See docs/kernels-interface.md.
//
// Plain function pointers, so per-ISA translation units provide entries without templates.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/tensor_type.hpp"
#include "kernels/packed_isa.hpp"

namespace ember::kernels {

/// Instruction sets ember has kernels for. Each has a parent (isa_parent) whose kernels it
/// inherits where it has no specific version: avx2_vnni -> avx2 -> scalar, avx512_gfni -> avx512
/// -> avx2, neon_i8mm -> neon_dotprod -> neon -> scalar.
enum class Isa : int { scalar = 0, avx2, avx2_vnni, avx512, avx512_gfni, neon, neon_dotprod, neon_i8mm };
constexpr int kIsaCount = 8;

/// The ISA whose kernels `isa` falls back to (scalar for scalar).
constexpr Isa isa_parent(Isa isa) noexcept {
    switch (isa) {
        case Isa::avx2_vnni: return Isa::avx2;
        case Isa::avx512: return Isa::avx2;
        case Isa::avx512_gfni: return Isa::avx512;
        case Isa::neon_dotprod: return Isa::neon;
        case Isa::neon_i8mm: return Isa::neon_dotprod;
        default: return Isa::scalar;
    }
}

/// Whether `isa` is `base` or extends it (base is on its chain of parents).
constexpr bool isa_extends(Isa isa, Isa base) noexcept {
    for (;; isa = isa_parent(isa)) {
        if (isa == base) return true;
        if (isa == Isa::scalar) return false;
    }
}

/// Quantizes one weight row of n floats (reference rounding: files match llama-quantize's).
using QuantizeRowFn = void (*)(const float* x, void* dst, std::int64_t n);
/// Converts n floats (n a multiple of the activation block size) into activation blocks.
using QuantizeActFn = void (*)(const float* x, void* dst, std::int64_t n);
/// Dequantizes n elements (a multiple of the weight block size) of one weight row.
using DequantizeFn = void (*)(const void* src, float* dst, std::int64_t n);
/// Dot product of one weight row (n elements) with one activation row of the partner type.
using VecDotFn = float (*)(std::int64_t n, const void* w, const void* a);
/// y[t * ldy + r] = dot(weight row r, activation row t) for r < n_w, t < n_a. Rows are
/// w_stride / a_stride bytes apart. Every y equals what VecDotFn gives for that pair, bit for
/// bit (batch invariance: a row's result does not depend on the rows computed with it).
using TileFn = void (*)(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w,
                        const void* a, std::size_t a_stride, std::int64_t n_a, float* y,
                        std::int64_t ldy);

/// Computes y[t * ldy + g * 16 + r] for groups g < n_groups, tokens t < n_tok, rows r < 16 with
/// g * 16 + r < n_valid_rows. `w` points at group 0 (groups group_bytes apart). Activations are
/// block-major (PackedLayout::prepare_act): the int8 values of (block b, token t) at
/// a + (b * n_tok + t) * block_values, their float scale at ad[b * n_tok + t] and the bias
/// word(s) at abias[(b * n_tok + t) * bias_words]. `n_after`: groups after the n_groups that the
/// calling thread goes on to read next (0 where none or unknown). A hint that changes no result:
/// the x86 one-token kernels and AVX-512's small-batch tiles hand their last prefetches on into
/// those groups, as they do from call to call within n_groups.
using PackedGemmFn = void (*)(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes,
                              std::int64_t n_groups, std::int64_t n_valid_rows,
                              const std::int8_t* a, const float* ad, const std::int32_t* abias,
                              std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t n_after);

/// A repacked 16-row layout of a weight type (ISA independent; kernels/packed.cpp).
struct PackedLayout {
    int block_values;  ///< Values per activation block column (32, or 256 for Q4_K).
    int bias_words;    ///< int32 words of bias per (block, token).
    /// Bytes of one group of 16 rows of n_cols values (a multiple of 64).
    std::size_t (*group_bytes)(std::int64_t n_cols) noexcept;
    /// Packs n <= 16 row-major rows (src_stride bytes apart) into one group at dst, which holds
    /// group_bytes(n_cols) zeroed bytes (the padding rows and bytes stay zero).
    void (*pack_group)(const std::uint8_t* src, std::size_t src_stride, std::int64_t n,
                       std::int64_t n_cols, std::uint8_t* dst) noexcept;
    /// Spreads token t's activation row (act_type blocks) into the block-major arrays.
    void (*prepare_act)(const std::uint8_t* act_row, std::int64_t t, std::int64_t n_tok,
                        std::int64_t n_cols, std::int8_t* qa, float* ad, std::int32_t* abias) noexcept;
};

struct TypeKernels {
    TensorType type = TensorType::F32;      ///< Weight type.
    TensorType act_type = TensorType::F32;  ///< Activation format (F32, F16, BF16, Q8_0, Q8_1, Q8_K).
    QuantizeRowFn quantize = nullptr;       ///< Reference weight quantizer (same on every ISA).
    QuantizeActFn quantize_act = nullptr;   ///< Output must be identical on every ISA.
    DequantizeFn dequantize = nullptr;
    VecDotFn vec_dot = nullptr;
    TileFn tile = nullptr;                  ///< nullptr: matmul loops over vec_dot.
    const PackedLayout* packed = nullptr;   ///< Repacked layout, or nullptr (row-major only).
    PackedGemmFn packed_gemm = nullptr;     ///< This ISA's kernel for `packed` (scalar's if none).
    bool prefer_packed = false;             ///< Repack at load on this ISA (faster than tiles).
    /// Row groups packed_gemm streams at a time for one token: decode splits a matrix over the
    /// threads in chunks of a multiple of them (a remainder runs a narrower, slower kernel).
    int decode_groups = 2;
};

/// Kernels of `type` for `isa` (inherited from isa_parent where the ISA has no own version),
/// or nullptr when ember has no kernels for the type or `isa` is not compiled in.
const TypeKernels* type_kernels(TensorType type, Isa isa) noexcept;

}  // namespace ember::kernels

// Declarations of the per-ISA kernels. Only kernel_table.cpp (which puts them in the traits
// table) should need these; everything else goes through TypeKernels / FloatKernels.
// Plain declarations only: per-ISA translation units include this header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/attention.hpp"

#define EMBER_DECLARE_VEC_DOT(name) float name(std::int64_t n, const void* w, const void* a);
#define EMBER_TILE_SIGNATURE(name)                                                               \
    void name(std::int64_t n, const void* w, std::size_t w_stride, std::int64_t n_w,           \
              const void* a, std::size_t a_stride, std::int64_t n_a, float* y, std::int64_t ldy)
#define EMBER_DECLARE_TILE(name) EMBER_TILE_SIGNATURE(name);
#define EMBER_PACKED_GEMM_SIGNATURE(name)                                                        \
    void name(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups, \
              std::int64_t n_valid_rows, const std::int8_t* a, const float* ad,                 \
              const std::int32_t* abias, std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t n_after)
#define EMBER_DECLARE_PACKED_GEMM(name) EMBER_PACKED_GEMM_SIGNATURE(name);
/// Defines the packed GEMMs of an ISA namespace from its kernels for Q4_0 (Q4 = true) and Q8_0
/// (gemm_legacy<Q4>), for Q4_K (Q5 = false) and Q5_K (gemm_q45k<Q5>) and for Q6_K (gemm_q6k).
#define EMBER_DEFINE_PACKED(gemm_legacy, gemm_q45k, gemm_q6k)                                     \
    EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q4_0) { gemm_legacy<true>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after); } \
    EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q8_0) { gemm_legacy<false>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after); } \
    EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q4_k) { gemm_q45k<false>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after); } \
    EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q5_k) { gemm_q45k<true>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after); } \
    EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q6_k) { gemm_q6k(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after); }
#define EMBER_DECLARE_QUANTIZE_ACT(name) void name(const float* x, void* dst, std::int64_t n);

// Float rows (F32/F16/BF16 weights; F16 against F32 activations, BF16 against BF16), 16-bit
// float conversions and the float ops of the forward pass (semantics: kernels/float_ops.hpp and
// kernels/attention.hpp).
#define EMBER_DECLARE_FLOAT_KERNELS                                                              \
    EMBER_DECLARE_VEC_DOT(vec_dot_f32)                                                          \
    EMBER_DECLARE_VEC_DOT(vec_dot_f16)                                                          \
    EMBER_DECLARE_VEC_DOT(vec_dot_bf16)                                                         \
    EMBER_DECLARE_QUANTIZE_ACT(quantize_act_bf16)                                               \
    void dequantize_f16(const void* src, float* dst, std::int64_t n);                           \
    void dequantize_bf16(const void* src, float* dst, std::int64_t n);                          \
    void rmsnorm(float* out, const float* x, const float* w, std::int64_t n, float eps);        \
    void swiglu(float* out, const float* gate, const float* up, std::int64_t n);                \
    void geglu(float* out, const float* gate, const float* up, std::int64_t n);                 \
    void add(float* y, const float* x, std::int64_t n);                                         \
    void rope(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,        \
              const float* cs, bool neox);                                                      \
    void attend_f32(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, \
                    float scale, float softcap, float* scratch);                            \
    void attend_f16(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, \
                    float scale, float softcap, float* scratch);                            \
    void attend_q8_0(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, \
                     float scale, float softcap, float* scratch);
// Register-tiled float GEMM (kernels/isa/float_gemm-inl.hpp).
#define EMBER_DECLARE_FLOAT_TILES                                                                \
    EMBER_DECLARE_TILE(tile_f32)                                                                \
    EMBER_DECLARE_TILE(tile_f16)                                                                \
    EMBER_DECLARE_TILE(tile_bf16)
// ggml's legacy 32-value blocks against Q8_0 / Q8_1 activations.
#define EMBER_DECLARE_LEGACY_DOTS                                                                \
    EMBER_DECLARE_VEC_DOT(vec_dot_q4_0)                                                         \
    EMBER_DECLARE_VEC_DOT(vec_dot_q4_1)                                                         \
    EMBER_DECLARE_VEC_DOT(vec_dot_q5_0)                                                         \
    EMBER_DECLARE_VEC_DOT(vec_dot_q5_1)                                                         \
    EMBER_DECLARE_VEC_DOT(vec_dot_q8_0)
#define EMBER_DECLARE_LEGACY_TILES                                                               \
    EMBER_DECLARE_TILE(tile_q4_0)                                                               \
    EMBER_DECLARE_TILE(tile_q4_1)                                                               \
    EMBER_DECLARE_TILE(tile_q5_0)                                                               \
    EMBER_DECLARE_TILE(tile_q5_1)                                                               \
    EMBER_DECLARE_TILE(tile_q8_0)
// K-quants against Q8_K activations.
#define EMBER_DECLARE_KQUANT_DOTS                                                                \
    EMBER_DECLARE_VEC_DOT(vec_dot_q4_k)                                                         \
    EMBER_DECLARE_VEC_DOT(vec_dot_q5_k)                                                         \
    EMBER_DECLARE_VEC_DOT(vec_dot_q6_k)
#define EMBER_DECLARE_KQUANT_TILES                                                               \
    EMBER_DECLARE_TILE(tile_q4_k)                                                               \
    EMBER_DECLARE_TILE(tile_q5_k)                                                               \
    EMBER_DECLARE_TILE(tile_q6_k)
// Repacked 16-row layouts (kernels/packed.hpp).
#define EMBER_DECLARE_PACKED                                                                     \
    EMBER_DECLARE_PACKED_GEMM(packed_gemm_q4_0)                                                 \
    EMBER_DECLARE_PACKED_GEMM(packed_gemm_q8_0)                                                 \
    EMBER_DECLARE_PACKED_GEMM(packed_gemm_q4_k)                                                 \
    EMBER_DECLARE_PACKED_GEMM(packed_gemm_q5_k)                                                 \
    EMBER_DECLARE_PACKED_GEMM(packed_gemm_q6_k)

namespace ember::kernels {
namespace scalar {  // the oracle of every other ISA
EMBER_DECLARE_FLOAT_KERNELS
EMBER_DECLARE_LEGACY_DOTS
EMBER_DECLARE_KQUANT_DOTS
EMBER_DECLARE_PACKED
}  // namespace scalar
namespace avx2 {  // AVX2 + FMA + F16C (Haswell): vpmaddubsw + vpmaddwd
EMBER_DECLARE_FLOAT_KERNELS
EMBER_DECLARE_FLOAT_TILES
EMBER_DECLARE_LEGACY_DOTS
EMBER_DECLARE_LEGACY_TILES
EMBER_DECLARE_KQUANT_DOTS
EMBER_DECLARE_KQUANT_TILES
EMBER_DECLARE_PACKED  // the 16-row layouts as two 8-row halves
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_0)    // identical bytes to the scalar quantizer
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_1)
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_k)    // identical bytes to quantize_row_q8_k
}  // namespace avx2
namespace avx2_vnni {  // + AVX-VNNI: vpdpwssd / vpdpbusd on ymm
EMBER_DECLARE_KQUANT_DOTS
EMBER_DECLARE_KQUANT_TILES
EMBER_DECLARE_PACKED
}  // namespace avx2_vnni
namespace avx512 {  // AVX-512 F/BW/VL/DQ + VNNI: vpdpbusd on zmm
EMBER_DECLARE_FLOAT_KERNELS
EMBER_DECLARE_FLOAT_TILES
EMBER_DECLARE_LEGACY_DOTS
EMBER_DECLARE_LEGACY_TILES
EMBER_DECLARE_KQUANT_DOTS
EMBER_DECLARE_KQUANT_TILES
EMBER_DECLARE_PACKED
EMBER_DECLARE_VEC_DOT(vec_dot_bf16_dp)           // needs AVX512_BF16 (vdpbf16ps)
EMBER_DECLARE_TILE(tile_bf16_dp)
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_0)    // identical bytes to the scalar quantizer
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_1)
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_k)    // identical bytes to quantize_row_q8_k
/// Row groups the Q4_0 and Q8_0 decode kernels take at a time (packed_avx512.cpp), and so the
/// multiple of groups their decode chunks come in (TypeKernels::decode_groups).
inline constexpr int kLegacyDecodeGroups = 4;
}  // namespace avx512
namespace avx512_gfni {  // + GFNI: gf2p8affineqb joins the K-quants' high bits to their nibbles
EMBER_DECLARE_PACKED_GEMM(packed_gemm_q5_k)
EMBER_DECLARE_PACKED_GEMM(packed_gemm_q6_k)
}  // namespace avx512_gfni
namespace neon {  // ARMv8-A Advanced SIMD: smull + sadalp
EMBER_DECLARE_FLOAT_KERNELS
EMBER_DECLARE_FLOAT_TILES
EMBER_DECLARE_LEGACY_DOTS
EMBER_DECLARE_LEGACY_TILES
EMBER_DECLARE_KQUANT_DOTS
EMBER_DECLARE_KQUANT_TILES
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_0)    // identical bytes to the scalar quantizer
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_1)
EMBER_DECLARE_QUANTIZE_ACT(quantize_act_q8_k)    // identical bytes to quantize_row_q8_k
EMBER_DECLARE_PACKED  // smull/smlal by broadcast group on the 16-row layouts
}  // namespace neon
namespace neon_dotprod {  // + FEAT_DotProd: sdot
EMBER_DECLARE_LEGACY_DOTS
EMBER_DECLARE_LEGACY_TILES
EMBER_DECLARE_KQUANT_DOTS
EMBER_DECLARE_KQUANT_TILES
EMBER_DECLARE_PACKED  // sdot by element on the 16-row layouts
}  // namespace neon_dotprod
namespace neon_i8mm {  // + FEAT_I8MM: smmla (2 rows x 2 tokens per instruction)
EMBER_DECLARE_LEGACY_TILES
EMBER_DECLARE_PACKED  // smmla on the 16-row layouts from 4 tokens, dotprod's below
}  // namespace neon_i8mm
}  // namespace ember::kernels

// Repacked ("row-interleaved") weight layouts for matmul: 16 weight rows are stored together so
// that one 512-bit vpdpbusd computes a 4-value dot for each of the 16 rows at once against one
// broadcast group of 4 activation bytes. Results land as a vector of 16 row outputs (no horizontal
// sums), the 16 row scales convert with one instruction, and one unpacked weight block serves
// many tokens during prefill. See docs/kernels-interface.md ("Repacked layouts").
//
// Group of 16 rows, nb = n_cols / 32 blocks, stride group_bytes(nb) (a multiple of 64):
//   [nb quant blocks of kPackRows rows][nb x 16 fp16 row scales][padding to 64]
//   Q8_0: block = 8 x 64 bytes; chunk s, lane r (bytes 4r..4r+3) = w[r][4s..4s+3] + 128 (u8).
//   Q4_0: block = 4 x 64 bytes; chunk m, lane r, byte i = the original qs[r][4m + i]: low nibble
//         is element 4m+i, high nibble element 16+4m+i (values 0..15, the -8 is applied later).
//   Q4_K: per 256-value superblock kPackQ4KBytes (packed_isa.hpp): chunk (pair k, c), lane r,
//         byte i = qs[r][32k + 4c + i] (low nibble: sub-block 2k value 4c+i, high: sub-block
//         2k+1), then scales [8 j][16 r], mins [4 p][16 r][2] (sub-blocks 2p, 2p+1), d, dmin.
//         Activations: Q8_K values block-major [sb][t][256], da [sb][t], and in place of the
//         bias [sb][t][4] int32 each holding the int16 sums of sub-blocks (2p, 2p+1).
// Missing rows of the last group are zero. Activations are Q8_0 blocks; per (token, block) the
// kernel also takes da (float) and bias = -offset * sum(q) (offset 8 for Q4_0, 128 for Q8_0).
#pragma once

#include <cstddef>
#include <cstdint>

#include "gguf/tensor_type.hpp"
#include "kernels/packed_isa.hpp"
#include "kernels/type_kernels.hpp"

namespace ember::kernels {

/// Computes y[t * ldy + g * 16 + r] for groups g < n_groups, tokens t < n_tok, rows r < 16 with
/// g * 16 + r < n_valid_rows. `w` points at group 0 (groups group_bytes apart). Activations are
/// block-major: the 32 int8 of (block b, token t) at a + (b * n_tok + t) * 32, their float
/// scale at ad[b * n_tok + t] and bias at abias[b * n_tok + t].
using PackedGemmFn = void (*)(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes,
                              std::int64_t n_groups, std::int64_t n_valid_rows,
                              const std::int8_t* a, const float* ad, const std::int32_t* abias,
                              std::int64_t n_tok, float* y, std::int64_t ldy);

struct PackedKernels {
    TensorType type;
    int offset;          ///< Unsigned weight offset (8: Q4_0, 128: Q8_0); bias = -offset * sum(q).
    std::size_t block_bytes;  ///< Quant bytes of one 16-row block (Q4_K: whole superblock).
    int block_values;         ///< Values per block column (32, or 256 for Q4_K).
    PackedGemmFn gemm;
};

/// Packed kernels of `type` on exactly `isa`, or nullptr.
const PackedKernels* packed_kernels_exact(TensorType type, Isa isa) noexcept;
/// Packed kernels for `isa`, falling back to lower ISAs (scalar exists for every packable type);
/// nullptr when the type has no packed layout.
const PackedKernels* packed_kernels(TensorType type, Isa isa) noexcept;

/// Bytes of one packed group of 16 rows of n_cols values.
std::size_t packed_group_bytes(const PackedKernels& k, std::int64_t n_cols) noexcept;
/// Packs rows [row0, row0 + n) (n <= 16) of a row-major tensor into one group at `dst`.
void pack_group(const PackedKernels& k, const std::uint8_t* src, std::size_t src_stride,
                std::int64_t n, std::int64_t n_cols, std::uint8_t* dst) noexcept;


}  // namespace ember::kernels

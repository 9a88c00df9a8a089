// Repacked ("row-interleaved") weight layouts for matmul: 16 weight rows are stored together so
// that one 512-bit vpdpbusd computes a 4-value dot for each of the 16 rows at once against one
// broadcast group of 4 activation bytes. Results land as a vector of 16 row outputs (no horizontal
// sums), the 16 row scales convert with one instruction, and one unpacked weight block serves
// many tokens during prefill. See docs/kernels-interface.md ("Repacked layouts").
//
// Group of 16 rows, nb = n_cols / 32 blocks, stride group_bytes(nb) (a multiple of 64). Q4_0 and
// Q8_0 blocks go in pairs, each followed by its two blocks' 16 fp16 row scales, so that one group
// is one stream of lines (legacy_quants_at / legacy_scales_at in packed_isa.hpp):
//   [quant block 2p][quant block 2p + 1][16 scales of 2p][16 scales of 2p + 1] for p < ceil(nb / 2)
//   Q8_0: block = 8 x 64 bytes; chunk s, lane r (bytes 4r..4r+3) = w[r][4s..4s+3] + 128 (u8).
//   Q4_0: block = 4 x 64 bytes; chunk m, lane r, byte i = the original qs[r][4m + i]: low nibble
//         is element 4m+i, high nibble element 16+4m+i (values 0..15, the -8 is applied later).
//   Q4_K: per 256-value superblock kPackQ4KBytes (packed_isa.hpp): chunk (pair k, c), lane r,
//         byte i = qs[r][32k + 4c + i] (low nibble: sub-block 2k value 4c+i, high: sub-block
//         2k+1), then scales [8 j][16 r], mins [4 p][16 r][2] (sub-blocks 2p, 2p+1), d, dmin.
//         Activations: Q8_K values block-major [sb][t][256], da [sb][t], and in place of the
//         bias [sb][t][4] int32 each holding the int16 sums of sub-blocks (2p, 2p+1).
//   Q5_K: per superblock kPackQ5KBytes: line w < 8, lane r = qh word w of row r (bit j of its
//         byte i: the fifth bit of value 4w+i of sub-block j), then Q4_K's superblock.
//   Q6_K: per superblock kPackQ6KBytes: line w < 32, lane r = ql word w of row r; line 32 + w
//         (w < 16) = qh word w; scales [16 j][16 r] (int8), d [16 r] (fp16), 32 zero bytes. The
//         6-bit value 4k+i (k < 32) of half h: nibble (k >= 16 ? high : low) of line 16h + k % 16,
//         bits 2(k / 8) of line 32 + 8h + k % 8 above it. Activations as Q4_K's, the bias
//         [sb][t][16] = -32 * (sum of sub-block j's 16 values), so the kernels use q in 0..63.
// Missing rows of the last group are zero. Activations are Q8_0 blocks; per (token, block) the
// kernel also takes da (float) and bias = -offset * sum(q) (offset 8 for Q4_0, 128 for Q8_0).
#pragma once

#include "kernels/type_kernels.hpp"

namespace ember::kernels {

/// The layouts, referenced by the traits table (kernel_table.cpp).
extern const PackedLayout kPackedQ4_0;
extern const PackedLayout kPackedQ8_0;
extern const PackedLayout kPackedQ4_K;
extern const PackedLayout kPackedQ5_K;
extern const PackedLayout kPackedQ6_K;

}  // namespace ember::kernels

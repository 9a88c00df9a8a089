// Constants of the repacked 16-row layouts (kernels/packed.hpp). Plain constants only, so per-ISA
// translation units can include this without instantiating STL templates.
#pragma once

namespace ember::kernels {

constexpr int kPackRows = 16;  ///< Weight rows interleaved in one packed group.
/// Bytes of one packed Q4_K superblock of 16 rows: 4 x 8 chunks of 64 quant bytes, 8 x 16 u8
/// scales, 4 x 16 x 2 u8 mins (pairs of sub-blocks), 16 fp16 d, 16 fp16 dmin.
constexpr int kPackQ4KBytes = 2048 + 128 + 128 + 32 + 32;
/// Bytes of one packed Q5_K superblock of 16 rows: 8 chunks of qh words, then as Q4_K.
constexpr int kPackQ5KBytes = 512 + kPackQ4KBytes;
/// Bytes of one packed Q6_K superblock of 16 rows: 32 lines of ql words and 16 of qh words (64
/// bytes each), 16 x 16 int8 scales, 16 fp16 d, 32 zero bytes (keeps superblocks line-aligned).
constexpr int kPackQ6KBytes = 2048 + 1024 + 256 + 32 + 32;

}  // namespace ember::kernels

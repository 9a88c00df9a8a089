// Constants of the repacked 16-row layouts (kernels/packed.hpp). Plain constants only, so per-ISA
// translation units can include this without instantiating STL templates.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

constexpr int kPackRows = 16;  ///< Weight rows interleaved in one packed group.

/// Legacy layouts (Q4_0, Q8_0): a group's blocks go in pairs, each pair followed by its blocks'
/// 16 fp16 row scales, [block 2p][block 2p + 1][scales 2p][scales 2p + 1], so that decode reads a
/// group as one stream (scales in a separate run after the blocks made two streams a group, and
/// with four groups a call, eight a core). An odd last block leaves its partner's bytes zero.
/// kBlock: bytes of one block (Q4_0 4 lines, Q8_0 8).
template <std::size_t kBlock>
constexpr std::size_t kLegacyPairBytes = 2 * kBlock + 2 * kPackRows * 2;
template <std::size_t kBlock>
constexpr std::size_t legacy_quants_at(std::int64_t b) {
    return static_cast<std::size_t>(b >> 1) * kLegacyPairBytes<kBlock> + static_cast<std::size_t>(b & 1) * kBlock;
}
template <std::size_t kBlock>
constexpr std::size_t legacy_scales_at(std::int64_t b) {
    return static_cast<std::size_t>(b >> 1) * kLegacyPairBytes<kBlock> + 2 * kBlock +
           static_cast<std::size_t>(b & 1) * kPackRows * 2;
}
/// Bytes of one packed Q4_K superblock of 16 rows: 4 x 8 chunks of 64 quant bytes, 8 x 16 u8
/// scales, 4 x 16 x 2 u8 mins (pairs of sub-blocks), 16 fp16 d, 16 fp16 dmin.
constexpr int kPackQ4KBytes = 2048 + 128 + 128 + 32 + 32;
/// Bytes of one packed Q5_K superblock of 16 rows: 8 chunks of qh words, then as Q4_K.
constexpr int kPackQ5KBytes = 512 + kPackQ4KBytes;
/// Bytes of one packed Q6_K superblock of 16 rows: 32 lines of ql words and 16 of qh words (64
/// bytes each), 16 x 16 int8 scales, 16 fp16 d, 32 zero bytes (keeps superblocks line-aligned).
constexpr int kPackQ6KBytes = 2048 + 1024 + 256 + 32 + 32;

}  // namespace ember::kernels

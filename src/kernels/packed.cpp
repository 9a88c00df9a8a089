#include "kernels/packed.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/fp16.hpp"
#include "kernels/kquant_blocks.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels {
namespace {

template <class Block>
std::size_t legacy_group_bytes(std::int64_t n_cols, std::size_t block_bytes) noexcept {
    const auto nb = static_cast<std::size_t>(n_cols / kQK);
    const std::size_t bytes = nb * (block_bytes + kPackRows * sizeof(std::uint16_t));
    return (bytes + 63) / 64 * 64;
}

std::size_t group_bytes_q4_0(std::int64_t n_cols) noexcept { return legacy_group_bytes<BlockQ4_0>(n_cols, 4 * 64); }
std::size_t group_bytes_q8_0(std::int64_t n_cols) noexcept { return legacy_group_bytes<BlockQ8_0>(n_cols, 8 * 64); }
std::size_t group_bytes_q4_k(std::int64_t n_cols) noexcept {
    return static_cast<std::size_t>(n_cols / kQK_K) * kPackQ4KBytes;
}

// The packed layouts interleave 16 rows in 4-byte words: each block (or super-block) of the
// group is assembled in a local buffer, row by row, and then stored whole, so the fresh
// destination is written once, in order (writing it word by word in place ran 2x slower).

// Stores an assembled block into the packed copy, which is far larger than the caches: streaming
// stores write it without first reading each line (on the reference VM no faster than plain
// stores, whose time there went to faulting the fresh pages in). Each pack_group call ends with
// a fence so its stores are visible once the task that ran it is seen to finish. In 16-byte pieces, not
// one memcpy of the local array: with the quants read in place, GCC 12 at -O3 took the packers
// for functions without side effects and dropped their calls (the kernel tests caught it).
template <std::size_t kBytes>
void store_block(std::uint8_t* dst, const std::uint8_t* block) noexcept {
    static_assert(kBytes % 16 == 0);
#if defined(__SSE2__)
    if (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) {
        for (std::size_t i = 0; i < kBytes; i += 16)
            _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + i)));
        return;
    }
#endif
    for (std::size_t i = 0; i < kBytes; i += 16) std::memcpy(dst + i, block + i, 16);
}

void end_stores() noexcept {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

// Legacy rows: quant bytes of block b, row r through `put(q, r, qs)` with qs the block's quants
// read in place (copying the odd-sized block to the stack first made the 4-byte reads straddle
// two stores, a store-forwarding stall per read), fp16 scale after the blocks.
using PutRow = void (*)(std::uint8_t* q, int r, const std::uint8_t* qs) noexcept;

template <class Block, std::size_t kBlockBytes, PutRow put>
void pack_legacy(const std::uint8_t* src, std::size_t src_stride, std::int64_t n, std::int64_t n_cols,
                 std::uint8_t* dst) noexcept {
    static_assert(offsetof(Block, d) == 0 && offsetof(Block, qs) == sizeof(std::uint16_t));
    const std::int64_t nb = n_cols / kQK;
    std::uint8_t* scales = dst + static_cast<std::size_t>(nb) * kBlockBytes;
    for (std::int64_t b = 0; b < nb; ++b) {
        alignas(64) std::uint8_t q[kBlockBytes] = {};
        std::uint16_t d[kPackRows] = {};
        for (std::int64_t r = 0; r < n; ++r) {
            const std::uint8_t* blk = src + static_cast<std::size_t>(r) * src_stride + b * sizeof(Block);
            std::memcpy(&d[r], blk, sizeof(std::uint16_t));
            put(q, static_cast<int>(r), blk + sizeof(std::uint16_t));
        }
        store_block<kBlockBytes>(dst + static_cast<std::size_t>(b) * kBlockBytes, q);
        store_block<sizeof d>(scales + static_cast<std::size_t>(b) * sizeof d, reinterpret_cast<const std::uint8_t*>(d));
    }
    end_stores();
}

void put_q4_0(std::uint8_t* q, int r, const std::uint8_t* qs) noexcept {
    for (int m = 0; m < 4; ++m) std::memcpy(q + m * 64 + r * 4, qs + 4 * m, 4);
}

void put_q8_0(std::uint8_t* q, int r, const std::uint8_t* qs) noexcept {
    for (int s = 0; s < 8; ++s)
        for (int i = 0; i < 4; ++i) q[s * 64 + r * 4 + i] = static_cast<std::uint8_t>(qs[4 * s + i] ^ 0x80);
}

void pack_q4_0(const std::uint8_t* src, std::size_t stride, std::int64_t n, std::int64_t n_cols,
               std::uint8_t* dst) noexcept {
    pack_legacy<BlockQ4_0, 4 * 64, put_q4_0>(src, stride, n, n_cols, dst);
}

void pack_q8_0(const std::uint8_t* src, std::size_t stride, std::int64_t n, std::int64_t n_cols,
               std::uint8_t* dst) noexcept {
    pack_legacy<BlockQ8_0, 8 * 64, put_q8_0>(src, stride, n, n_cols, dst);
}

void pack_q4_k(const std::uint8_t* src, std::size_t src_stride, std::int64_t n, std::int64_t n_cols,
               std::uint8_t* dst) noexcept {
    for (std::int64_t sb = 0; sb < n_cols / kQK_K; ++sb) {
        alignas(64) std::uint8_t o[kPackQ4KBytes] = {};
        for (std::int64_t r = 0; r < n; ++r) {
            BlockQ4K blk;
            std::memcpy(&blk, src + static_cast<std::size_t>(r) * src_stride + sb * sizeof(BlockQ4K), sizeof blk);
            for (int kk = 0; kk < 4; ++kk)
                for (int c = 0; c < 8; ++c) std::memcpy(o + kk * 512 + c * 64 + r * 4, blk.qs + 32 * kk + 4 * c, 4);
            for (int j = 0; j < 8; ++j) {
                std::uint8_t sc, m;
                kq_scale_min_k4(j, blk.scales, &sc, &m);
                o[2048 + j * 16 + r] = sc;
                o[2048 + 128 + (j / 2) * 32 + r * 2 + (j % 2)] = m;
            }
            std::memcpy(o + 2048 + 256 + r * 2, &blk.d, 2);
            std::memcpy(o + 2048 + 256 + 32 + r * 2, &blk.dmin, 2);
        }
        store_block<kPackQ4KBytes>(dst + static_cast<std::size_t>(sb) * kPackQ4KBytes, o);
    }
    end_stores();
}

// Token t's Q8_0 activation row to block-major values, float scales and bias -offset * sum(q).
template <int kOffset>
void prepare_q8_0(const std::uint8_t* act, std::int64_t t, std::int64_t n_tok, std::int64_t n_cols,
                  std::int8_t* qa, float* ad, std::int32_t* ab) noexcept {
    for (std::int64_t b = 0; b < n_cols / kQK; ++b) {
        const std::size_t i = static_cast<std::size_t>(b * n_tok + t);
        BlockQ8_0 blk;
        std::memcpy(&blk, act + b * sizeof(BlockQ8_0), sizeof blk);
        std::int32_t sum = 0;
        for (int j = 0; j < kQK; ++j) sum += blk.qs[j];
        std::memcpy(qa + i * kQK, blk.qs, kQK);
        ad[i] = fp16_to_fp32(blk.d);
        ab[i] = -kOffset * sum;
    }
}

// Token t's Q8_K row: values, d, and per sub-block pair (2p, 2p+1) the two int16 sums in one word.
void prepare_q8_k(const std::uint8_t* act, std::int64_t t, std::int64_t n_tok, std::int64_t n_cols,
                  std::int8_t* qa, float* ad, std::int32_t* ab) noexcept {
    for (std::int64_t b = 0; b < n_cols / kQK_K; ++b) {
        const std::size_t i = static_cast<std::size_t>(b * n_tok + t);
        BlockQ8K blk;
        std::memcpy(&blk, act + b * sizeof(BlockQ8K), sizeof blk);
        std::memcpy(qa + i * kQK_K, blk.qs, kQK_K);
        ad[i] = blk.d;
        for (int p = 0; p < 4; ++p) {
            const std::int16_t pair[2] = {static_cast<std::int16_t>(blk.bsums[4 * p] + blk.bsums[4 * p + 1]),
                                          static_cast<std::int16_t>(blk.bsums[4 * p + 2] + blk.bsums[4 * p + 3])};
            std::memcpy(ab + i * 4 + static_cast<std::size_t>(p), pair, 4);
        }
    }
}

}  // namespace

const PackedLayout kPackedQ4_0{kQK, 1, group_bytes_q4_0, pack_q4_0, prepare_q8_0<8>};
const PackedLayout kPackedQ8_0{kQK, 1, group_bytes_q8_0, pack_q8_0, prepare_q8_0<128>};
const PackedLayout kPackedQ4_K{kQK_K, 4, group_bytes_q4_k, pack_q4_k, prepare_q8_k};

}  // namespace ember::kernels

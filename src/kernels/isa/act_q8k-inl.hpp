// The Q8_K activation quantizer's per-superblock steps shared by the AVX2 and AVX-512 versions
// (act_<isa>.cpp), bit-identical to quantize_row_q8_k (kquant_quantize.cpp): max = the first value
// of the largest magnitude (NaN never counts), iscale = -127 / max, q = min(127, nearest_int(iscale
// * x)) kept as its low byte, bsums = sums of 16 of those bytes, d = 1 / iscale; all-zero (or
// all-NaN) blocks are zero. nearest_int is ggml's: x + 1.5 * 2^23, the low mantissa bits.
// Kernel code only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/kquant_blocks.hpp"

namespace ember::kernels {
namespace {

/// Writes one BlockQ8K at out from 256 values. The ISA supplies amax(x) (NaN ignored), the index
/// of the first |x[i]| == amax, and quantize16(x, iscale, qs) -> sum of the 16 stored bytes.
template <class Amax, class FirstAt, class Quantize16>
inline void write_q8k_block(const float* x, std::uint8_t* out, Amax amax_of, FirstAt first_at, Quantize16 quantize16) {
    const float amax = amax_of(x);
    if (amax == 0.0f) {
        std::memset(out, 0, sizeof(BlockQ8K));
        return;
    }
    const float max = x[first_at(x, amax)];
    const float iscale = -127.f / max;
    std::int16_t bsums[kQK_K / 16];
    for (int j = 0; j < kQK_K / 16; ++j) {
        bsums[j] = static_cast<std::int16_t>(
            quantize16(x + 16 * j, iscale, reinterpret_cast<std::int8_t*>(out + offsetof(BlockQ8K, qs) + 16 * j)));
    }
    const float d = 1 / iscale;
    std::memcpy(out + offsetof(BlockQ8K, d), &d, sizeof d);
    std::memcpy(out + offsetof(BlockQ8K, bsums), bsums, sizeof bsums);
}

}  // namespace
}  // namespace ember::kernels

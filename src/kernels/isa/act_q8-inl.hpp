// The Q8_0 / Q8_1 activation block writer shared by the SIMD quantizers (act_<isa>.cpp). Each
// ISA supplies quantize32<WithSum>(x, qs) -> Q8Scale: 32 values to int8 at qs exactly as the
// scalar quantizer (quants.cpp) rounds them, their scale d and (WithSum) the sum of the int8s,
// and to_half(float) -> fp16 bits rounded to nearest even (x86: vcvtps2ph).
// EMBER_DEFINE_QUANTIZE_ACT_Q8 then defines quantize_act_q8_0 / _q8_1 in the enclosing ISA
// namespace, writing d (and d * sum) as fp16. Kernel code only.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/quant_blocks.hpp"

namespace ember::kernels {
namespace {

struct Q8Scale {
    float d;
    int sum;
};

template <bool WithSum, class Quantize32, class ToHalf>
inline void write_q8_blocks(const float* x, std::uint8_t* out, std::size_t block_bytes, std::int64_t n,
                            Quantize32 quantize32, ToHalf to_half) {
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK, out += block_bytes) {
        const Q8Scale s = quantize32(x, reinterpret_cast<std::int8_t*>(out + (WithSum ? 4 : 2)));
        const std::uint16_t dh = to_half(s.d);
        std::memcpy(out, &dh, 2);
        if constexpr (WithSum) {
            const std::uint16_t sh = to_half(s.d * static_cast<float>(s.sum));
            std::memcpy(out + 2, &sh, 2);
        }
    }
}

}  // namespace
}  // namespace ember::kernels

#define EMBER_DEFINE_QUANTIZE_ACT_Q8(quantize32, to_half)                                                           \
    void quantize_act_q8_0(const float* x, void* dst, std::int64_t n) {                                             \
        write_q8_blocks<false>(x, static_cast<std::uint8_t*>(dst), sizeof(BlockQ8_0), n, quantize32<false>, to_half); \
    }                                                                                                                \
    void quantize_act_q8_1(const float* x, void* dst, std::int64_t n) {                                             \
        write_q8_blocks<true>(x, static_cast<std::uint8_t*>(dst), sizeof(BlockQ8_1), n, quantize32<true>, to_half);   \
    }

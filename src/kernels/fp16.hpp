// Exact IEEE binary16 and bfloat16 conversions (scalar; the per-ISA kernels use F16C/AVX-512).
// fp32 -> fp16 rounds to nearest even, keeps subnormals, inf and nan (nan stays quiet nan).
// bf16 is the upper half of an fp32; fp32 -> bf16 rounds to nearest even like ggml.
#pragma once

#include <bit>
#include <cstdint>

namespace ember::kernels {

constexpr float fp16_to_fp32(std::uint16_t h) noexcept {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    std::uint32_t mant = h & 0x3ffu;
    std::uint32_t bits = 0;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);  // inf / nan (payload kept)
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;  // signed zero
    } else {
        // Subnormal: normalize the mantissa.
        std::uint32_t e = 113;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --e;
        }
        bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
    }
    return std::bit_cast<float>(bits);
}

constexpr std::uint16_t fp32_to_fp16(float f) noexcept {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
    const std::uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) {  // inf or nan
        if (ax == 0x7f800000u) return sign | 0x7c00u;
        return static_cast<std::uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    }
    if (ax >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
    if (ax < 0x38800000u) {
        // Result is subnormal or zero: value = ax_float / 2^-24 rounded to nearest even.
        if (ax < 0x33000000u) return sign;  // < 2^-25: rounds to zero (2^-25 ties to even 0)
        const std::uint32_t e = ax >> 23;
        const std::uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        const std::uint32_t shift = 126u - e;  // bits to drop so that unit = 2^-24
        std::uint32_t r = m >> shift;
        const std::uint32_t rem = m & ((1u << shift) - 1u);
        const std::uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return static_cast<std::uint16_t>(sign | r);
    }
    // Normal: rebias and round the 13 dropped bits to nearest even (carry may bump exponent).
    std::uint32_t v = ax - 0x38000000u;  // exponent 127 -> 15 bias
    const std::uint32_t rem = v & 0x1fffu;
    v >>= 13;
    if (rem > 0x1000u || (rem == 0x1000u && (v & 1u))) ++v;
    return static_cast<std::uint16_t>(sign | v);
}

constexpr float bf16_to_fp32(std::uint16_t h) noexcept {
    return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

constexpr std::uint16_t fp32_to_bf16(float f) noexcept {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 64u);  // quiet nan
    return static_cast<std::uint16_t>((x + (0x7fffu + ((x >> 16) & 1u))) >> 16);
}

}  // namespace ember::kernels

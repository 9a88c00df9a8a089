// ggml's legacy quantized block layouts (ggml-common.h), bit-exact with GGUF files.
// Scales are IEEE half stored as raw uint16_t. Plain structs: safe to include in per-ISA TUs.
#pragma once

#include <cstdint>

namespace ember::kernels {

constexpr int kQK = 32;  ///< Elements per legacy block.

/// x = d * (q - 8), q in [0, 16): element j in low nibble of qs[j], element j+16 in high.
struct BlockQ4_0 {
    std::uint16_t d;
    std::uint8_t qs[kQK / 2];
};
/// x = d * q + m, q in [0, 16).
struct BlockQ4_1 {
    std::uint16_t d, m;
    std::uint8_t qs[kQK / 2];
};
/// x = d * (q - 16), q in [0, 32): low 4 bits as Q4_0, bit 4 of element j in bit j of qh.
struct BlockQ5_0 {
    std::uint16_t d;
    std::uint8_t qh[4];
    std::uint8_t qs[kQK / 2];
};
/// x = d * q + m, q in [0, 32).
struct BlockQ5_1 {
    std::uint16_t d, m;
    std::uint8_t qh[4];
    std::uint8_t qs[kQK / 2];
};
/// x = d * q, q in [-127, 127] (weights and activations).
struct BlockQ8_0 {
    std::uint16_t d;
    std::int8_t qs[kQK];
};
/// Activation partner of Q4_1/Q5_1: x = d * q, s = d * sum(q) (both half).
struct BlockQ8_1 {
    std::uint16_t d, s;
    std::int8_t qs[kQK];
};

static_assert(sizeof(BlockQ4_0) == 2 + 16, "Q4_0 block size");
static_assert(sizeof(BlockQ4_1) == 4 + 16, "Q4_1 block size");
static_assert(sizeof(BlockQ5_0) == 2 + 4 + 16, "Q5_0 block size");
static_assert(sizeof(BlockQ5_1) == 4 + 4 + 16, "Q5_1 block size");
static_assert(sizeof(BlockQ8_0) == 2 + 32, "Q8_0 block size");
static_assert(sizeof(BlockQ8_1) == 4 + 32, "Q8_1 block size");

}  // namespace ember::kernels

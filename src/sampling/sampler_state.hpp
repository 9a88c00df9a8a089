// The bytes of Sampler::save_state, little-endian:
//   magic "EMSP" | u32 version (1) | u64 seed | 4 x u64 RNG state | u32 n_history |
//   n_history x i32 tokens, oldest first | u64 FNV-1a checksum of all bytes before it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/penalty_history.hpp"
#include "sampling/rng.hpp"

namespace ember::sampling {

inline constexpr std::uint32_t kStateVersion = 1;

struct DecodedState {
    std::uint64_t seed = 0;
    Rng::State rng{};
    std::vector<Token> history;  ///< Oldest first.
};

std::vector<std::uint8_t> encode_state(std::uint64_t seed, const Rng::State& rng,
                                       const PenaltyHistory& history);

/// Parses and validates; throws ember::Error naming the byte offset of what is wrong.
DecodedState decode_state(std::span<const std::uint8_t> bytes);

}  // namespace ember::sampling

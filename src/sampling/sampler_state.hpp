// The bytes of Sampler::save_state, little-endian:
//   magic "EMSP" | u32 version (2) | u64 seed | 4 x u64 RNG state | u32 n_history |
//   n_history x i32 tokens, oldest first |
//   u32 grammar bytes (0: no grammar), then that many bytes:
//     u64 grammar fingerprint | u32 partial UTF-8 value | u8 remain | u8 length | u16 0 |
//     u32 n_stacks | per stack: u32 depth, depth x u32 grammar positions (bottom first) |
//   u64 FNV-1a checksum of all bytes before it.
// Version 1 (written before grammars) is the same without the grammar part; it still reads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "grammar/matcher.hpp"
#include "sampling/penalty_history.hpp"
#include "sampling/rng.hpp"

namespace ember::sampling {

inline constexpr std::uint32_t kStateVersion = 2;

struct GrammarPosition {
    std::uint64_t fingerprint = 0;
    grammar::PartialUtf8 partial;
    std::vector<std::vector<std::uint32_t>> stacks;
};

struct DecodedState {
    std::uint64_t seed = 0;
    Rng::State rng{};
    std::vector<Token> history;  ///< Oldest first.
    bool has_grammar = false;
    GrammarPosition grammar;
};

/// `grammar` null: the sampler has none.
std::vector<std::uint8_t> encode_state(std::uint64_t seed, const Rng::State& rng,
                                       const PenaltyHistory& history, const GrammarPosition* grammar);

/// Parses and validates; throws ember::Error naming the byte offset of what is wrong.
DecodedState decode_state(std::span<const std::uint8_t> bytes);

}  // namespace ember::sampling

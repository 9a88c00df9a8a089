#include "sampling/sampler_state.hpp"

#include <string>

#include "runtime/fail.hpp"

namespace ember::sampling {
namespace {

constexpr std::uint8_t kMagic[4] = {'E', 'M', 'S', 'P'};
// magic + version + seed + rng + n_history
constexpr std::size_t kHeaderBytes = 4 + 4 + 8 + 32 + 4;
constexpr std::size_t kChecksumBytes = 8;

std::uint64_t fnv1a(std::span<const std::uint8_t> bytes) {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (std::uint8_t b : bytes) {
        h ^= b;
        h *= 0x100000001B3ull;
    }
    return h;
}

// Writes v as n_bytes little-endian bytes at out[at] and advances `at`.
void put(std::vector<std::uint8_t>& out, std::size_t& at, std::uint64_t v, int n_bytes) {
    for (int i = 0; i < n_bytes; ++i) out[at++] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get(std::span<const std::uint8_t> in, std::size_t offset, int n_bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < n_bytes; ++i) v |= static_cast<std::uint64_t>(in[offset + i]) << (8 * i);
    return v;
}

[[noreturn]] void bad(std::size_t offset, const std::string& what) {
    fail("sampler state at byte " + std::to_string(offset) + ": " + what);
}

}  // namespace

std::vector<std::uint8_t> encode_state(std::uint64_t seed, const Rng::State& rng,
                                       const PenaltyHistory& history) {
    std::vector<std::uint8_t> out(kHeaderBytes + 4 * history.size() + kChecksumBytes);
    std::size_t at = 0;
    for (std::uint8_t b : kMagic) out[at++] = b;
    put(out, at, kStateVersion, 4);
    put(out, at, seed, 8);
    for (std::uint64_t word : rng) put(out, at, word, 8);
    put(out, at, history.size(), 4);
    for (std::size_t i = 0; i < history.size(); ++i) {
        put(out, at, static_cast<std::uint32_t>(history[i]), 4);
    }
    const std::uint64_t checksum = fnv1a(std::span(out).first(at));
    put(out, at, checksum, 8);
    return out;
}

DecodedState decode_state(std::span<const std::uint8_t> bytes) {
    if (bytes.size() < kHeaderBytes + kChecksumBytes) {
        bad(0, std::to_string(bytes.size()) + " bytes is too short for a state (at least " +
                   std::to_string(kHeaderBytes + kChecksumBytes) + ")");
    }
    for (std::size_t i = 0; i < 4; ++i) {
        if (bytes[i] != kMagic[i]) bad(0, "bad magic (not a sampler state)");
    }
    const auto version = static_cast<std::uint32_t>(get(bytes, 4, 4));
    if (version != kStateVersion) {
        bad(4, "unsupported version " + std::to_string(version) + " (expected " +
                   std::to_string(kStateVersion) + ")");
    }
    const std::size_t n_history = get(bytes, kHeaderBytes - 4, 4);
    const std::size_t expected = kHeaderBytes + 4 * n_history + kChecksumBytes;
    if (bytes.size() != expected) {
        bad(kHeaderBytes - 4, "history of " + std::to_string(n_history) + " tokens needs " +
                                  std::to_string(expected) + " bytes, got " +
                                  std::to_string(bytes.size()));
    }
    const std::size_t checksum_at = expected - kChecksumBytes;
    if (get(bytes, checksum_at, 8) != fnv1a(bytes.first(checksum_at))) {
        bad(checksum_at, "checksum mismatch (corrupt state)");
    }

    DecodedState state;
    state.seed = get(bytes, 8, 8);
    for (std::size_t i = 0; i < 4; ++i) state.rng[i] = get(bytes, 16 + 8 * i, 8);
    if (!Rng::valid_state(state.rng)) bad(16, "RNG state is all zero");
    state.history.resize(n_history);
    for (std::size_t i = 0; i < n_history; ++i) {
        const std::size_t at = kHeaderBytes + 4 * i;
        const auto token = static_cast<Token>(static_cast<std::uint32_t>(get(bytes, at, 4)));
        if (token < 0) bad(at, "negative token " + std::to_string(token) + " in the history");
        state.history[i] = token;
    }
    return state;
}

}  // namespace ember::sampling

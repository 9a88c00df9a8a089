#include "sampling/sampler_state.hpp"

#include <string>

#include "runtime/fail.hpp"

namespace ember::sampling {
namespace {

constexpr std::uint8_t kMagic[4] = {'E', 'M', 'S', 'P'};
// magic + version + seed + rng + n_history
constexpr std::size_t kHeaderBytes = 4 + 4 + 8 + 32 + 4;
constexpr std::size_t kChecksumBytes = 8;
// fingerprint + partial (value, remain, length, pad) + n_stacks
constexpr std::size_t kGrammarHeaderBytes = 8 + 4 + 1 + 1 + 2 + 4;

std::uint64_t fnv1a(std::span<const std::uint8_t> bytes) {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (std::uint8_t b : bytes) {
        h ^= b;
        h *= 0x100000001B3ull;
    }
    return h;
}

void put(std::vector<std::uint8_t>& out, std::uint64_t v, int n_bytes) {
    for (int i = 0; i < n_bytes; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::uint64_t get(std::span<const std::uint8_t> in, std::size_t offset, int n_bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < n_bytes; ++i) v |= static_cast<std::uint64_t>(in[offset + i]) << (8 * i);
    return v;
}

[[noreturn]] void bad(std::size_t offset, const std::string& what) {
    fail("sampler state at byte " + std::to_string(offset) + ": " + what);
}

// Reads the grammar part in [at, end); throws naming offsets.
GrammarPosition decode_grammar(std::span<const std::uint8_t> bytes, std::size_t at, std::size_t end) {
    if (end - at < kGrammarHeaderBytes) bad(at, "grammar position is truncated");
    GrammarPosition g;
    g.fingerprint = get(bytes, at, 8);
    g.partial.value = static_cast<std::uint32_t>(get(bytes, at + 8, 4));
    g.partial.remain = bytes[at + 12];
    g.partial.length = bytes[at + 13];
    const std::size_t n_stacks = get(bytes, at + 16, 4);
    if (n_stacks == 0 || n_stacks > grammar::Matcher::kMaxStacks) {
        bad(at + 16, std::to_string(n_stacks) + " grammar stacks (expected 1 to " +
                         std::to_string(grammar::Matcher::kMaxStacks) + ")");
    }
    at += kGrammarHeaderBytes;
    g.stacks.resize(n_stacks);
    for (auto& stack : g.stacks) {
        if (end - at < 4) bad(at, "grammar stack is truncated");
        const std::size_t depth = get(bytes, at, 4);
        at += 4;
        if (depth > (end - at) / 4) bad(at - 4, "grammar stack of " + std::to_string(depth) + " positions is truncated");
        stack.resize(depth);
        for (auto& pos : stack) {
            pos = static_cast<std::uint32_t>(get(bytes, at, 4));
            at += 4;
        }
    }
    if (at != end) bad(at, "bytes left after the grammar position");
    return g;
}

}  // namespace

std::vector<std::uint8_t> encode_state(std::uint64_t seed, const Rng::State& rng,
                                       const PenaltyHistory& history, const GrammarPosition* grammar) {
    std::vector<std::uint8_t> out;
    out.reserve(kHeaderBytes + 4 * history.size() + 4 + kChecksumBytes);
    for (std::uint8_t b : kMagic) out.push_back(b);
    put(out, kStateVersion, 4);
    put(out, seed, 8);
    for (std::uint64_t word : rng) put(out, word, 8);
    put(out, history.size(), 4);
    for (std::size_t i = 0; i < history.size(); ++i) put(out, static_cast<std::uint32_t>(history[i]), 4);
    const std::size_t size_at = out.size();
    put(out, 0, 4);
    if (grammar) {
        put(out, grammar->fingerprint, 8);
        put(out, grammar->partial.value, 4);
        put(out, grammar->partial.remain, 1);
        put(out, grammar->partial.length, 1);
        put(out, 0, 2);
        put(out, grammar->stacks.size(), 4);
        for (const auto& stack : grammar->stacks) {
            put(out, stack.size(), 4);
            for (std::uint32_t pos : stack) put(out, pos, 4);
        }
        const std::size_t n = out.size() - size_at - 4;
        for (int i = 0; i < 4; ++i) out[size_at + i] = static_cast<std::uint8_t>(n >> (8 * i));
    }
    put(out, fnv1a(out), 8);
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
    if (version != 1 && version != kStateVersion) {
        bad(4, "unsupported version " + std::to_string(version) + " (expected 1 or " +
                   std::to_string(kStateVersion) + ")");
    }
    const std::size_t n_history = get(bytes, kHeaderBytes - 4, 4);
    const std::size_t history_end = kHeaderBytes + 4 * n_history;
    const std::size_t minimum = history_end + (version >= 2 ? 4 : 0) + kChecksumBytes;
    if (n_history > bytes.size() / 4 || bytes.size() < minimum ||
        (version == 1 && bytes.size() != minimum)) {
        bad(kHeaderBytes - 4, "history of " + std::to_string(n_history) + " tokens does not fit in " +
                                  std::to_string(bytes.size()) + " bytes");
    }
    const std::size_t checksum_at = bytes.size() - kChecksumBytes;
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
    if (version >= 2) {
        const std::size_t n_grammar = get(bytes, history_end, 4);
        if (n_grammar != checksum_at - history_end - 4) {
            bad(history_end, "grammar position of " + std::to_string(n_grammar) + " bytes does not fit");
        }
        if (n_grammar > 0) {
            state.has_grammar = true;
            state.grammar = decode_grammar(bytes, history_end + 4, checksum_at);
        }
    }
    return state;
}

}  // namespace ember::sampling

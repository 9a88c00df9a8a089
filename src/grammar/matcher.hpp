// Where the output stands in a grammar, and which tokens may come next.
//
// The state is a set of pushdown stacks, as in llama.cpp's grammar sampler: each stack lists
// grammar positions, the top one a terminal (a character or class) that the next code point
// must match; an empty stack means the output so far is a complete match. Stacks are stored
// as nodes (position, parent) in an arena, hash-consed so that equal stacks are one node: a
// set of stacks is a sorted list of node ids, cheap to compare, deduplicate and use as a key.
//
// Masks: the vocabulary's token pieces form a byte trie (TokenTrie, shared per vocabulary);
// one preorder scan advances the stacks byte by byte (UTF-8 decoded incrementally) and skips
// the whole subtree of any prefix that no stack accepts, so a token's bytes are never examined
// twice and rejected prefixes cost one step. Nodes made during the scan are popped again in
// LIFO order (the hash table supports that exactly). Masks are cached per state (LRU): inside
// a JSON string or a repeated structure the same state comes back at every step.
//
// Memory: every buffer is sized at construction; a step allocates only when a grammar needs
// more live stacks, stack nodes or set entries than these buffers hold (they then grow).
// Accepted tokens add nodes; when the arena fills, the nodes no longer reachable from the
// state are dropped (compaction, which also clears the mask cache).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ember/types.hpp"
#include "grammar/grammar.hpp"
#include "grammar/token_trie.hpp"

namespace ember::grammar {

/// An incomplete UTF-8 sequence carried from one token to the next.
struct PartialUtf8 {
    std::uint32_t value = 0;   ///< Bits decoded so far.
    std::uint8_t remain = 0;   ///< Continuation bytes still expected (0: none pending).
    std::uint8_t length = 0;   ///< Length of the whole sequence (2-4) while pending.
    bool operator==(const PartialUtf8&) const = default;
};

class Matcher {
public:
    /// Most stacks a state may hold; a grammar that needs more is too ambiguous (ember::Error).
    static constexpr std::size_t kMaxStacks = 4096;

    Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> vocab);

    /// Back to the start of the grammar.
    void reset();

    /// True when the output so far is a complete match (end-of-generation tokens are allowed).
    bool can_end() const noexcept;

    /// Whether `token` may come next (end-of-generation tokens: can_end()). Changes nothing
    /// visible. Throws ember::Error for an id outside the vocabulary.
    bool allows(Token token);

    /// Moves past `token`. Throws ember::Error (and changes nothing) when it is not allowed.
    /// An end-of-generation token changes nothing.
    void accept(Token token);

    /// One bit per token (bit t of word t / 64): set when the non-end-of-generation token t is
    /// allowed next. Valid until the next call of a non-const member.
    std::span<const std::uint64_t> mask();

    /// The stacks, bottom first, and the pending partial character (for saving states).
    std::vector<std::vector<std::uint32_t>> stacks() const;
    const PartialUtf8& partial() const noexcept { return partial_; }
    /// Replaces the state. Throws ember::Error (and changes nothing) when a position is not
    /// one this grammar's matcher could have reached.
    void set_state(const std::vector<std::vector<std::uint32_t>>& stacks, PartialUtf8 partial);

    const Grammar& grammar() const noexcept { return *grammar_; }
    const TokenTrie& vocab() const noexcept { return *vocab_; }

    /// Statistics for benchmarks: masks computed and taken from the cache.
    std::uint64_t masks_computed() const noexcept { return n_computed_; }
    std::uint64_t masks_cached() const noexcept { return n_cache_hits_; }

private:
    static constexpr std::uint32_t kNil = 0xFFFFFFFFu;  ///< The empty stack / no parent.
    static constexpr std::size_t kCacheEntries = 16;
    static constexpr std::size_t kCacheKeyMax = 24;

    struct Node {
        std::uint32_t pos;
        std::uint32_t parent;
    };
    struct CacheEntry {
        std::uint64_t hash = 0;
        std::uint64_t last_use = 0;
        std::uint32_t n_keys = 0;
        bool valid = false;
        PartialUtf8 partial;
        std::array<std::uint32_t, kCacheKeyMax> keys{};
        std::vector<std::uint64_t> bits;
    };

    // Stack nodes.
    std::uint32_t make_node(std::uint32_t pos, std::uint32_t parent);
    void truncate_nodes(std::size_t n);
    void grow_nodes();
    void compact();

    // Appends to `out` the stacks reached from the stacks `in` by code point `cp`; returns how
    // many (0: rejected).
    std::size_t advance(std::span<const std::uint32_t> in, char32_t cp, std::vector<std::uint32_t>& out);
    // Appends to `out` every stack with a terminal on top (or the empty stack) that `stack`
    // expands to; `seen` marks and dedupes within one advance.
    void expand(std::uint32_t stack, std::vector<std::uint32_t>& out);
    // Whether some stack in `in` accepts a code point that the pending `p` could complete to.
    bool partial_possible(std::span<const std::uint32_t> in, const PartialUtf8& p) const;
    // Runs `piece` from the state; leaves the resulting set in walk_a_ and returns false if
    // some byte is rejected.
    bool walk(std::string_view piece, PartialUtf8& p);

    void compute_mask(std::uint64_t* bits);
    std::uint64_t state_hash() const noexcept;

    std::shared_ptr<const Grammar> grammar_;
    std::shared_ptr<const TokenTrie> vocab_;
    std::size_t n_words_ = 0;

    std::vector<Node> nodes_;
    std::vector<std::uint32_t> table_;  ///< Open addressing, linear probing: node ids.
    std::vector<std::uint32_t> seen_;   ///< Per node: the advance stamp that last saw it.
    std::uint32_t stamp_ = 0;
    bool seen_empty_ = false;

    std::vector<std::uint32_t> state_;  ///< Sorted node ids (kNil, the empty stack, last).
    PartialUtf8 partial_;
    std::vector<std::uint32_t> start_state_;

    // Scratch, sized at construction.
    std::vector<std::uint32_t> work_;
    std::vector<std::uint32_t> sets_;
    std::vector<std::uint32_t> walk_a_, walk_b_;
    struct Level {
        std::uint32_t begin, size;
        std::uint32_t nodes_end, sets_end;
        PartialUtf8 partial;
    };
    std::vector<Level> levels_;
    std::vector<std::uint8_t> live_;
    std::vector<std::uint32_t> remap_;

    std::array<CacheEntry, kCacheEntries> cache_;
    std::vector<std::uint64_t> uncached_bits_;
    std::uint64_t use_clock_ = 0;
    std::uint64_t n_computed_ = 0, n_cache_hits_ = 0;
};

}  // namespace ember::grammar

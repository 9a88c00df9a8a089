// Where the output stands in a grammar, and which tokens may come next.
//
// The state is a set of pushdown stacks, as in llama.cpp's grammar sampler: each stack lists
// grammar positions, the top one a terminal (a character or class) that the next code point
// must match; an empty stack means the output so far is a complete match. Stacks are stored
// as nodes (position, parent) in an arena, hash-consed so that equal stacks are one node: a
// set of stacks is a sorted list of node ids, cheap to compare, deduplicate and use as a key.
//
// Transitions: a set of stacks plus a pending partial character is interned as a "DFA state";
// its transition on a byte is computed once (advance the stacks, expand, intern the result)
// and then read from a 256-entry table. Inside a JSON string almost every byte leads back to
// the same state, so after warm-up a step costs a table lookup.
//
// Masks: the vocabulary's token pieces form a byte trie (TokenTrie, shared per vocabulary); one
// preorder scan follows the transitions byte by byte and skips the whole subtree of any prefix
// that leads nowhere, so rejected prefixes cost one lookup. Masks are also cached per state
// (LRU): the same states come back at most steps.
//
// Memory: buffers are sized at construction and grow only for new states (a transition not
// computed before may add stack nodes, a state and its table). When the states or the stack
// nodes pass their bounds, every state is forgotten and the nodes no longer reachable from the
// current position are dropped (the tables and masks are then rebuilt on demand).
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

    /// Forgets the cached masks (benchmarks measure the uncached cost with it).
    void clear_mask_cache() noexcept;
    /// Forgets every state and transition too (the next steps rebuild them).
    void clear_states();

    /// Statistics for benchmarks.
    std::uint64_t masks_computed() const noexcept { return n_computed_; }
    std::uint64_t masks_cached() const noexcept { return n_cache_hits_; }
    std::size_t n_states() const noexcept { return states_.size(); }

private:
    static constexpr std::uint32_t kNil = 0xFFFFFFFFu;      ///< The empty stack / no parent.
    static constexpr std::uint32_t kDead = 0xFFFFFFFFu;     ///< No state (a rejected byte).
    static constexpr std::uint32_t kUnknown = 0xFFFFFFFEu;  ///< Transition not computed yet.
    static constexpr std::size_t kMaxStates = 4096;
    static constexpr std::size_t kCacheEntries = 16;

    struct Node {
        std::uint32_t pos;
        std::uint32_t parent;
    };
    struct State {
        std::uint64_t hash;
        std::uint32_t begin, size;  ///< Its stacks: state_sets_[begin, begin + size), sorted.
        PartialUtf8 partial;
    };
    struct CacheEntry {
        std::uint32_t state = kDead;
        std::uint64_t last_use = 0;
        std::vector<std::uint64_t> bits;
    };

    // Stack nodes.
    std::uint32_t make_node(std::uint32_t pos, std::uint32_t parent);
    void grow_nodes();
    void compact();

    // Appends to `out` the stacks reached from `in` by code point `cp`; returns how many.
    std::size_t advance(std::span<const std::uint32_t> in, char32_t cp, std::vector<std::uint32_t>& out);
    void expand(std::uint32_t stack, std::vector<std::uint32_t>& out);
    bool partial_possible(std::span<const std::uint32_t> in, const PartialUtf8& p) const;

    // States and transitions.
    std::uint32_t intern(std::span<const std::uint32_t> sorted_set, const PartialUtf8& p);
    std::uint32_t next_state(std::uint32_t s, std::uint8_t byte);
    std::uint32_t compute_transition(std::uint32_t s, std::uint8_t byte);
    std::span<const std::uint32_t> set_of(std::uint32_t s) const noexcept {
        return std::span(state_sets_).subspan(states_[s].begin, states_[s].size);
    }
    std::uint32_t current();          ///< The state of (state_, partial_), interned.
    std::uint32_t walk(std::string_view piece);  ///< kDead if rejected.
    void maintain();                  ///< Bounds checks between operations.

    void compute_mask(std::uint32_t state, std::uint64_t* bits);

    std::shared_ptr<const Grammar> grammar_;
    std::shared_ptr<const TokenTrie> vocab_;
    std::size_t n_words_ = 0;

    std::vector<Node> nodes_;
    std::vector<std::uint32_t> table_;  ///< Open addressing, linear probing: node ids.
    std::vector<std::uint32_t> seen_;   ///< Per node: the expansion stamp that last saw it.
    std::uint32_t stamp_ = 0;
    bool seen_empty_ = false;
    std::vector<std::uint32_t> work_, scratch_;

    std::vector<std::uint32_t> state_;  ///< Sorted node ids (kNil, the empty stack, last).
    PartialUtf8 partial_;
    std::uint32_t current_ = kDead;     ///< Interned state_ + partial_, or kDead if not yet.
    std::vector<std::uint32_t> start_state_;

    std::vector<State> states_;
    std::vector<std::uint32_t> state_sets_;
    std::vector<std::uint32_t> state_table_;  ///< Open addressing: state ids.
    std::vector<std::uint32_t> transitions_;  ///< 256 per state.

    std::vector<std::uint32_t> levels_;  ///< Per trie depth: the state after that prefix.
    std::vector<std::uint8_t> live_;

    std::array<CacheEntry, kCacheEntries> cache_;
    std::uint64_t use_clock_ = 0;
    std::uint64_t n_computed_ = 0, n_cache_hits_ = 0;
};

}  // namespace ember::grammar

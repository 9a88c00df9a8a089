// The paged key/value store: one pool of fixed-size pages shared by every sequence of a Session
// or an Engine, and a prefix cache over it.
//
// A page holds the keys and values of `block` consecutive positions of ONE layer in the pool's
// KvType, both head by head: each head's keys as a grid [dim][position] (model/kv_type.hpp),
// each head's values as slabs of 32 dims ([slab][position][dim], kernels/kv_grid.hpp), so that
// attention, which reads one head at a time, streams each head's part of a page in one piece.
// The pool keeps each head's parts of all pages together (a plane of keys and one of values per
// head, in page order), so a sequence's pages of one head lie closer together than whole pages
// would. A sequence (model/kv_cache.hpp) has, per layer, a table of pages: position p of layer l
// is row p % block of page table[l][p / block]. Pages are taken as sequences grow, counted by
// reference (a page may be shared by sequences with a common prefix and by the prefix cache)
// and copied before a write when shared (copy-on-write).
//
// The prefix cache is a tree of token blocks: a node holds up to `block` tokens (full blocks,
// and the partial last block of a finished sequence) and one page per layer with their keys and
// values. A new sequence walks the tree with its prompt and shares the pages of the longest
// match, to the token (a partial match shares the page and copies it at the first write, where
// the two sequences diverge). Nodes whose pages nobody else uses are evicted least recently used
// first, leaves only, when pages run out.
//
// Not thread-safe: its owner (a Session, or an Engine's worker thread) serializes every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "ember/types.hpp"
#include "model/config.hpp"
#include "model/kv_type.hpp"

namespace ember::model {

class KvCache;

struct KvPoolOptions {
    std::int64_t block = 16;   ///< Positions per page.
    std::int64_t pages = 0;    ///< Pages in the pool (each one layer x `block` positions).
    KvType type = KvType::f32;
    bool prefix_cache = false; ///< Keep finished sequences' blocks for later prompts.
};

class KvPool {
public:
    /// Allocates every page up front (nothing is allocated afterwards). Throws ember::Error when
    /// `type` cannot hold this model's rows (Q8_0 needs head_dim % 32 == 0).
    KvPool(const ModelConfig& config, KvPoolOptions options);
    ~KvPool();
    KvPool(const KvPool&) = delete;
    KvPool& operator=(const KvPool&) = delete;

    const ModelConfig& config() const noexcept { return *config_; }
    const KvPoolOptions& options() const noexcept { return options_; }
    std::int64_t block() const noexcept { return block_; }
    std::int64_t n_pages() const noexcept { return n_pages_; }
    KvType type() const noexcept { return type_; }
    /// Bytes of one row (one position of one layer, keys or values).
    std::size_t row_bytes() const noexcept { return row_bytes_; }
    /// Bytes of one head's part of a row (row_bytes() / n_head_kv).
    std::size_t head_bytes() const noexcept { return head_bytes_; }
    /// Bytes of the whole pool.
    std::size_t bytes() const noexcept { return 2 * row_bytes_ * static_cast<std::size_t>(block_ * n_pages_); }

    /// Pages no sequence and no cache entry holds.
    std::int64_t free_pages() const noexcept { return static_cast<std::int64_t>(free_.size()); }
    /// Pages that could be had now: free ones plus those only the prefix cache holds.
    std::int64_t available_pages() const;
    /// Whether take() can give n pages now (evicting cached prefixes as needed).
    bool can_give(std::int64_t n) const { return n <= free_pages() || n <= available_pages(); }

    // ---- pages (for KvCache) --------------------------------------------------------------------
    /// A free page (refcount 1), evicting cached prefixes when none is free; -1 when none can be had.
    std::int32_t take();
    void ref(std::int32_t page) noexcept;
    void unref(std::int32_t page) noexcept;
    std::int32_t refs(std::int32_t page) const noexcept { return refs_[static_cast<std::size_t>(page)]; }
    /// Shared pages copied before a write (copy-on-write), counted by KvCache since construction.
    std::int64_t copies() const noexcept { return copies_; }
    void count_copy() noexcept { ++copies_; }
    /// A page's keys of head h: a grid of block() positions (model/kv_type.hpp), in head h's
    /// plane of every page's grid (block() * head_bytes() bytes a page, in page order).
    std::uint8_t* k_grid(std::int32_t page, std::int64_t head) noexcept { return k_.get() + key_offset(page, head); }
    const std::uint8_t* k_grid(std::int32_t page, std::int64_t head) const noexcept { return k_.get() + key_offset(page, head); }
    /// A page's values of head h: slabs of block() positions (model/kv_type.hpp), in head h's
    /// plane of every page's values, as the keys.
    std::uint8_t* v_slabs(std::int32_t page, std::int64_t head) noexcept { return v_.get() + key_offset(page, head); }
    const std::uint8_t* v_slabs(std::int32_t page, std::int64_t head) const noexcept { return v_.get() + key_offset(page, head); }
    /// Copies page `from`'s keys and values to page `to`.
    void copy_page(std::int32_t from, std::int32_t to) noexcept;
    /// Copies page `from` of `src` (a pool of the same model, KvType and block) to page `to` of this pool.
    void copy_page_from(const KvPool& src, std::int32_t from, std::int32_t to) noexcept;

    // ---- prefix cache -----------------------------------------------------------------------------
    bool prefix_cache() const noexcept { return prefix_cache_; }
    /// Shares with `cache` (empty) the cached keys and values of the longest prefix of
    /// tokens[0, limit) the cache holds; returns its length (0: nothing shared).
    std::int64_t match(std::span<const Token> tokens, std::int64_t limit, KvCache& cache);
    /// Records the blocks of `cache` covering tokens[0, n) (n <= cache positions written): full
    /// blocks, and the partial last one when `partial`. Blocks already cached are kept.
    void insert(std::span<const Token> tokens, std::int64_t n, const KvCache& cache, bool partial);
    /// Counters of the prefix cache.
    struct CacheStats {
        std::int64_t nodes = 0, lookups = 0, hits = 0, hit_tokens = 0, evicted = 0;
    };
    const CacheStats& cache_stats() const noexcept { return stats_; }

private:
    struct Node;
    // Head h's part of page p: plane h (every page's part of head h, in page order), then page p's.
    std::size_t key_offset(std::int32_t page, std::int64_t head) const noexcept {
        return static_cast<std::size_t>(head) * plane_bytes_ + static_cast<std::size_t>(page) * page_head_bytes_;
    }
    bool evict_one();
    bool only_cached(const Node& node) const noexcept;
    void drop_node(std::int32_t node);

    const ModelConfig* config_;
    KvPoolOptions options_;
    std::int64_t block_ = 16, n_pages_ = 0, n_layer_ = 0;
    KvType type_ = KvType::f32;
    std::size_t row_bytes_ = 0, head_bytes_ = 0;
    std::size_t page_head_bytes_ = 0;  // block_ * head_bytes_: one head's part of a page
    std::size_t plane_bytes_ = 0;      // n_pages_ * page_head_bytes_: one head's part of the pool
    bool prefix_cache_ = false;
    std::shared_ptr<std::uint8_t> k_, v_;
    std::vector<std::int32_t> refs_;
    std::vector<std::int32_t> free_;
    std::int64_t copies_ = 0;

    // Prefix tree: nodes_[0] is the root (no tokens, no pages).
    struct Node {
        std::int32_t parent = -1;
        std::vector<std::int32_t> children;
        std::vector<Token> tokens;        // 1..block tokens
        std::vector<std::int32_t> pages;  // [n_layer], -1 where a sliding layer had let it go
        std::uint64_t last_use = 0;
        bool live = false;
    };
    std::vector<Node> nodes_;
    std::vector<std::int32_t> free_nodes_;
    std::uint64_t clock_ = 0;
    CacheStats stats_;
};

}  // namespace ember::model

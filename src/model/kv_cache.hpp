// The key/value cache of one sequence: per layer, a table of pages of a KvPool
// (model/kv_pool.hpp). Position p of layer l is row p % block of page pages(l)[p / block].
//
// Sliding-window layers (model/config.hpp: a query at p reads positions (p - n_swa, p]) let go
// of the pages no later query reads, except those holding the first n_pinned positions (which a
// context shift keeps), so they hold about a window plus a batch. Global layers hold every
// position. Before a forward pass writes positions [first, last], reserve() takes the pages
// they need (copying shared ones: copy-on-write) and lets sliding layers drop what no query at
// first or later reads; a pool with no room fails there, before anything changes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/kv_pool.hpp"

namespace ember::model {

class KvCache {
public:
    KvCache() = default;
    /// A sequence of at most n_ctx positions in `pool`, whose first n_pinned positions stay in
    /// sliding-window layers (the context shift's n_keep). Takes no page yet.
    KvCache(KvPool& pool, std::int64_t n_ctx, std::int64_t n_pinned = 0);
    /// A cache with a pool of its own (as a lone Session has), with room for n_ctx positions
    /// written in batches of at most n_batch: every position in global layers; in sliding
    /// layers the pinned positions, the window and a batch (twice, for a context shift's copy).
    /// Its reserve() never fails.
    KvCache(const ModelConfig& config, std::int64_t n_ctx, std::int64_t n_batch = 1,
            std::int64_t n_pinned = 0, KvType type = KvType::f32);
    /// Bytes such a cache allocates (saturating), to check before constructing one. Throws
    /// ember::Error when `type` cannot hold this model's rows.
    static std::uint64_t bytes_needed(const ModelConfig& config, std::int64_t n_ctx, std::int64_t n_batch = 1,
                                      std::int64_t n_pinned = 0, KvType type = KvType::f32);
    ~KvCache();
    KvCache(KvCache&& other) noexcept;
    KvCache& operator=(KvCache&& other) noexcept;
    /// A copy: a cache with a pool of its own copies its rows into a new pool of its own; one
    /// in a shared pool shares every page with the copy (copy-on-write on later writes, fork()).
    KvCache(const KvCache& other);
    KvCache& operator=(const KvCache&) = delete;

    bool valid() const noexcept { return pool_ != nullptr; }
    KvPool& pool() const noexcept { return *pool_; }
    std::int64_t n_ctx() const noexcept { return n_ctx_; }
    std::int64_t n_layer() const noexcept { return static_cast<std::int64_t>(pages_.size()); }
    std::int64_t n_pinned() const noexcept { return n_pinned_; }
    std::int64_t block() const noexcept { return block_; }
    /// Positions written so far (the high-water mark; truncate() lowers it).
    std::int64_t size() const noexcept { return size_; }
    /// The layer's window (0: global).
    std::int64_t window(std::int64_t layer) const noexcept;

    /// Makes positions [first, last] writable: first <= size() (no gap), last < n_ctx. Returns
    /// false, changing nothing, when the pool cannot give the pages needed (a standalone cache
    /// always has them). Afterwards size() >= last + 1. Allocates no memory. Throws ember::Error
    /// when `first` is before rewind_limit().
    bool reserve(std::int64_t first, std::int64_t last);
    /// Pages reserve(first, last) would take (upper bound, for admission decisions).
    std::int64_t pages_needed(std::int64_t first, std::int64_t last) const noexcept;
    /// The smallest position writing may restart from (0 unless sliding layers dropped pages).
    std::int64_t rewind_limit() const noexcept;
    /// Forgets positions >= n (pages wholly past n are let go). n <= size().
    void truncate(std::int64_t n) noexcept;
    /// Forgets every position and lets every page go.
    void clear() noexcept { truncate(0); }

    /// Whether `layer` holds position `pos` (pos < size()).
    bool holds(std::int64_t layer, std::int64_t pos) const noexcept;
    /// Stores the keys and values of a held position (n_embd_kv floats each, heads in order),
    /// rounded to the pool's KvType.
    void store(std::int64_t layer, std::int64_t pos, const float* keys, const float* values) noexcept;
    /// Stores a held position's keys alone (the context shift's re-rotated keys).
    void store_keys(std::int64_t layer, std::int64_t pos, const float* keys) noexcept;
    /// Reads a held position's keys / values back as n_embd_kv floats.
    void load_keys(std::int64_t layer, std::int64_t pos, float* keys) const noexcept;
    void load_values(std::int64_t layer, std::int64_t pos, float* values) const noexcept;
    /// The page of `layer` holding block `b` (-1: none).
    std::int32_t page_of(std::int64_t layer, std::int64_t b) const noexcept;

    /// Calls fn(page, row, n) for the runs of consecutive positions [first, last] of `layer` (all
    /// held), in order: rows [row, row + n) of `page` (KvPool::k_grid, KvPool::v_slabs).
    template <class Fn>
    void for_each_run(std::int64_t layer, std::int64_t first, std::int64_t last, Fn&& fn) const {
        for (std::int64_t p = first; p <= last;) {
            const std::int64_t end = std::min(last + 1, (p / block_ + 1) * block_);
            fn(page(layer, p), p % block_, end - p);
            p = end;
        }
    }
    /// The positions a query at `pos` reads in `layer`: [first, pos].
    std::int64_t attend_first(std::int64_t layer, std::int64_t pos) const noexcept;

    /// Context shift: positions [from, from + n) become [to, to + n) (to < from, from + n =
    /// size()) and size() becomes to + n. Keys keep their old rotation (re-rotate them,
    /// model/context_shift.hpp). With sliding layers that dropped pages, to must be n_pinned.
    /// Returns false when the pool cannot give pages to copy shared ones into (nothing changed).
    bool move_down(std::int64_t from, std::int64_t to, std::int64_t n);

    /// Shares every page with a new cache in the same pool (copy-on-write on later writes).
    KvCache fork() const;
    /// Copies the held rows into `dst` (another pool of the same model and KvType; dst empty
    /// with room for size() positions). False when dst's pool has no room.
    bool copy_to(KvCache& dst) const;

    /// The positions `layer` holds after n_past were written: [0, prefix_end) and
    /// [tail_begin, n_past) (prefix_end <= tail_begin <= n_past).
    struct Held {
        std::int64_t prefix_end = 0, tail_begin = 0;
    };
    Held held(std::int64_t layer, std::int64_t n_past) const noexcept;
    /// Checks that a saved cache of n_past positions whose layers held `saved` has every
    /// position this cache needs (global layers: all; sliding layers: the pinned ones and the
    /// window before n_past). Throws ember::Error, prefixed with `name`, when some are missing.
    void check_restorable(std::span<const Held> saved, std::int64_t n_past, const std::string& name) const;
    /// Takes the pages a restored sequence of n_past positions needs (global layers: all;
    /// sliding layers: the pinned ones and the window before n_past), to be filled with the
    /// saved rows holds() accepts. The cache must be empty. False when the pool has no room.
    bool prepare_restore(std::int64_t n_past);

private:
    friend class KvPool;
    KvCache(std::unique_ptr<KvPool> own, std::int64_t n_ctx, std::int64_t n_pinned);
    std::int32_t page(std::int64_t layer, std::int64_t pos) const noexcept {
        return pages_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(pos / block_)];
    }
    void release_layer_blocks(std::int64_t layer, std::int64_t b0, std::int64_t b1) noexcept;
    /// Makes block b of `layer` a page this cache alone holds: a fresh one, or a copy of a
    /// shared one (copy-on-write). The caller has checked that the pool can give it.
    void own_block(std::int64_t layer, std::int64_t b) noexcept;
    /// Lets sliding layers go of the (unpinned) blocks no query at `pos` or later reads.
    void drop_sliding_before(std::int64_t pos) noexcept;

    std::unique_ptr<KvPool> own_pool_;  // standalone(): destroyed after the pages go back
    KvPool* pool_ = nullptr;
    std::int64_t n_ctx_ = 0, n_pinned_ = 0, block_ = 16, size_ = 0;
    std::int64_t sliding_from_ = 0;  // sliding layers hold [0, n_pinned) and [sliding_from_, size_); 0: all
    std::vector<std::vector<std::int32_t>> pages_;  // [n_layer][ceil(n_ctx / block)], -1: none
};

}  // namespace ember::model

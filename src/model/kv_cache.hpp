// The key/value cache of one sequence: for every layer, the keys and values of the positions
// its queries can still read.
//
// Global layers hold every position [0, n_ctx). Sliding-window layers (model/config.hpp: a query
// at p reads positions (p - n_swa, p]) hold far fewer: the first n_pinned positions (those a
// context shift keeps, so they never leave) and a sliding run [base, ...) of the latest
// positions, n_swa + n_batch - 1 plus some slack. When a batch would run past the end, the
// run is compacted to its start (what later queries still read moves down), so every query
// reads one contiguous range and the copy costs amortize to a few rows per token.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace ember::model {

class KvCache {
public:
    KvCache() = default;
    /// A cache for n_ctx positions, written in batches of at most n_batch rows, whose first
    /// n_pinned positions are kept in sliding-window layers (the context shift's n_keep).
    KvCache(const ModelConfig& config, std::int64_t n_ctx, std::int64_t n_batch = 1,
            std::int64_t n_pinned = 0);
    /// Bytes such a cache allocates (saturating), to check before constructing one.
    static std::uint64_t bytes_needed(const ModelConfig& config, std::int64_t n_ctx, std::int64_t n_batch = 1,
                                      std::int64_t n_pinned = 0) noexcept;

    std::int64_t n_ctx() const noexcept { return n_ctx_; }
    std::int64_t n_layer() const noexcept { return static_cast<std::int64_t>(layers_.size()); }
    std::int64_t n_embd_kv() const noexcept { return n_embd_kv_; }
    std::int64_t n_pinned() const noexcept { return n_pinned_; }
    /// Rows `layer` stores (n_ctx for global layers).
    std::int64_t capacity(std::int64_t layer) const noexcept { return at(layer).capacity; }
    /// The layer's window (0: global).
    std::int64_t window(std::int64_t layer) const noexcept { return at(layer).window; }
    /// First position of the sliding run (n_pinned while nothing was dropped).
    std::int64_t base() const noexcept { return base_; }

    /// Whether `layer` still holds position `pos` (pos must have been written).
    bool holds(std::int64_t layer, std::int64_t pos) const noexcept;
    /// Keys of `layer` at a held position: n_embd_kv floats (n_head_kv heads of head_dim).
    float* k(std::int64_t layer, std::int64_t pos) noexcept { return k_.data() + offset(layer, pos); }
    float* v(std::int64_t layer, std::int64_t pos) noexcept { return v_.data() + offset(layer, pos); }
    const float* k(std::int64_t layer, std::int64_t pos) const noexcept { return k_.data() + offset(layer, pos); }
    const float* v(std::int64_t layer, std::int64_t pos) const noexcept { return v_.data() + offset(layer, pos); }

    /// The keys and values a query at `pos` reads in `layer` (positions (pos - window, pos],
    /// from 0 for global layers): n consecutive rows of n_embd_kv floats.
    struct Span {
        const float* k;
        const float* v;
        std::int64_t n;
    };
    Span attend_span(std::int64_t layer, std::int64_t pos) const noexcept;

    /// Makes room for writing positions [first, last] (one batch: last - first < n_batch),
    /// dropping from sliding layers what no query at first or later reads. Allocates nothing.
    /// Throws ember::Error when `first` rewinds further than rewind_limit().
    void reserve(std::int64_t first, std::int64_t last);
    /// The smallest position writing may restart from (0 unless sliding layers dropped rows).
    std::int64_t rewind_limit() const noexcept;

    /// Context shift: positions [from, from + n) become [to, to + n) and [to, from) are
    /// dropped (to < from; from + n is the number of positions written). Keys keep their old
    /// rotation: re-rotate them (model/context_shift.hpp). With sliding layers, `to` must be
    /// n_pinned. Allocates nothing.
    void move_down(std::int64_t from, std::int64_t to, std::int64_t n) noexcept;

    /// The positions `layer` holds after n_past were written: [0, prefix_end) and
    /// [tail_begin, n_past) (prefix_end <= tail_begin <= n_past).
    struct Held {
        std::int64_t prefix_end = 0, tail_begin = 0;
    };
    Held held(std::int64_t layer, std::int64_t n_past) const noexcept;
    /// Checks that a saved cache of n_past positions whose layers held `saved` (one per layer)
    /// has every position this cache must hold, and returns the start of the sliding run this
    /// cache takes for it (for adopt(); then write the rows of the positions holds() accepts).
    /// Throws ember::Error, prefixed with `name`, when positions are missing.
    std::int64_t restore_base(std::span<const Held> saved, std::int64_t n_past, const std::string& name) const;
    /// Sets the start of the sliding run (restore_base()); clear() forgets every position.
    void adopt(std::int64_t base) noexcept { base_ = base; }
    void clear() noexcept { base_ = n_pinned_; }

    std::size_t bytes() const noexcept { return (k_.size() + v_.size()) * sizeof(float); }

private:
    struct Layer {
        std::int64_t window = 0;    // 0: global
        std::int64_t capacity = 0;  // rows
        std::size_t offset = 0;     // first float of the layer in k_ / v_
    };
    const Layer& at(std::int64_t layer) const noexcept { return layers_[static_cast<std::size_t>(layer)]; }
    /// Row of `pos` in `layer`: identity for global layers; pinned rows first, then the run.
    std::int64_t slot(std::int64_t layer, std::int64_t pos) const noexcept {
        return at(layer).window == 0 || pos < n_pinned_ ? pos : n_pinned_ + pos - base_;
    }
    std::size_t offset(std::int64_t layer, std::int64_t pos) const noexcept {
        return at(layer).offset + static_cast<std::size_t>(slot(layer, pos) * n_embd_kv_);
    }
    void move_rows(std::int64_t layer, std::int64_t from_slot, std::int64_t to_slot, std::int64_t n) noexcept;

    std::int64_t n_ctx_ = 0, n_embd_kv_ = 0, n_batch_ = 1, n_pinned_ = 0;
    std::int64_t base_ = 0;  // first position of the sliding run (sliding layers)
    std::vector<Layer> layers_;
    std::vector<float> k_;  // per layer [capacity][n_embd_kv]
    std::vector<float> v_;
};

}  // namespace ember::model

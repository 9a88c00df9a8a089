#include "model/kv_cache.hpp"

#include <algorithm>

#include "runtime/fail.hpp"
#include "runtime/memory.hpp"

namespace ember::model {

namespace {

// Rows a sliding layer needs: the pinned ones, a window and a batch, plus slack so that
// compaction (copying about n_swa rows) happens once every `slack` positions.
std::int64_t sliding_rows(const ModelConfig& c, std::int64_t n_ctx, std::int64_t n_batch, std::int64_t n_pinned) {
    const std::int64_t slack = std::max<std::int64_t>(16, c.n_swa / 2);
    return std::min(n_ctx, n_pinned + c.n_swa + n_batch - 1 + slack);
}

}  // namespace

std::uint64_t KvCache::bytes_needed(const ModelConfig& c, std::int64_t n_ctx, std::int64_t n_batch,
                                    std::int64_t n_pinned) noexcept {
    const std::int64_t sliding = sliding_rows(c, n_ctx, std::max<std::int64_t>(n_batch, 1),
                                              std::clamp<std::int64_t>(n_pinned, 0, n_ctx));
    std::uint64_t rows = 0;
    for (std::int64_t il = 0; il < c.n_layer; ++il) {
        rows = saturating_add(rows, static_cast<std::uint64_t>(c.is_local(il) ? sliding : n_ctx));
    }
    return saturating_mul(saturating_mul(rows, static_cast<std::uint64_t>(c.n_embd_kv())), 2 * sizeof(float));
}

KvCache::KvCache(const ModelConfig& c, std::int64_t n_ctx, std::int64_t n_batch, std::int64_t n_pinned)
    : n_ctx_(n_ctx), n_embd_kv_(c.n_embd_kv()), n_batch_(std::max<std::int64_t>(n_batch, 1)),
      n_pinned_(std::clamp<std::int64_t>(n_pinned, 0, n_ctx)), base_(n_pinned_) {
    EMBER_ASSERT(n_ctx > 0);
    const std::int64_t sliding = sliding_rows(c, n_ctx, n_batch_, n_pinned_);
    layers_.resize(static_cast<std::size_t>(c.n_layer));
    std::size_t total = 0;
    for (std::int64_t il = 0; il < c.n_layer; ++il) {
        Layer& l = layers_[static_cast<std::size_t>(il)];
        l.window = c.is_local(il) ? c.n_swa : 0;
        l.capacity = l.window > 0 ? sliding : n_ctx;
        l.offset = total;
        total += static_cast<std::size_t>(l.capacity * n_embd_kv_);
    }
    k_.resize(total);
    v_.resize(total);
}

bool KvCache::holds(std::int64_t layer, std::int64_t pos) const noexcept {
    if (pos < 0 || pos >= n_ctx_) return false;
    if (at(layer).window == 0 || pos < n_pinned_) return true;
    return pos >= base_ && slot(layer, pos) < at(layer).capacity;
}

KvCache::Span KvCache::attend_span(std::int64_t layer, std::int64_t pos) const noexcept {
    const std::int64_t w = at(layer).window;
    const std::int64_t first = w == 0 ? 0 : std::max<std::int64_t>(0, pos - w + 1);
    // The run starts right after the pinned rows, so a range reaching into them is contiguous
    // only while nothing after them was dropped.
    EMBER_ASSERT(holds(layer, first) && holds(layer, pos) && (first >= n_pinned_ || base_ == n_pinned_ || w == 0));
    return {k(layer, first), v(layer, first), pos - first + 1};
}

std::int64_t KvCache::rewind_limit() const noexcept {
    std::int64_t w = 0;
    for (const Layer& l : layers_) w = std::max(w, l.window);
    return base_ == n_pinned_ ? 0 : base_ + w - 1;
}

void KvCache::reserve(std::int64_t first, std::int64_t last) {
    EMBER_ASSERT(0 <= first && first <= last && last < n_ctx_ && last - first < n_batch_);
    if (first < rewind_limit()) {
        fail("the sliding-window cache no longer holds what position " + std::to_string(first) +
             " reads (it can restart from position " + std::to_string(rewind_limit()) + ")");
    }
    for (std::int64_t il = 0; il < n_layer(); ++il) {
        const Layer& l = at(il);
        if (l.window == 0 || slot(il, last) < l.capacity) continue;
        // Keep [keep, first): what queries at first.. read; it moves to the start of the run.
        const std::int64_t keep = std::max(n_pinned_, first - l.window + 1);
        const std::int64_t from = slot(il, keep);
        for (std::int64_t jl = il; jl < n_layer(); ++jl) {
            if (at(jl).window > 0) move_rows(jl, from, n_pinned_, first - keep);
        }
        base_ = keep;
        EMBER_ASSERT(slot(il, last) < l.capacity);
        break;  // every sliding layer has the same window and capacity
    }
}

void KvCache::move_rows(std::int64_t layer, std::int64_t from_slot, std::int64_t to_slot,
                        std::int64_t n) noexcept {
    if (n <= 0 || from_slot == to_slot) return;
    const auto count = static_cast<std::ptrdiff_t>(n * n_embd_kv_);
    const std::size_t base = at(layer).offset;
    const auto src = static_cast<std::ptrdiff_t>(base + static_cast<std::size_t>(from_slot * n_embd_kv_));
    const auto dst = static_cast<std::ptrdiff_t>(base + static_cast<std::size_t>(to_slot * n_embd_kv_));
    // to_slot < from_slot: a forward copy is safe for overlapping ranges.
    std::copy_n(k_.begin() + src, count, k_.begin() + dst);
    std::copy_n(v_.begin() + src, count, v_.begin() + dst);
}

void KvCache::move_down(std::int64_t from, std::int64_t to, std::int64_t n) noexcept {
    EMBER_ASSERT(0 <= to && to < from && from + n <= n_ctx_);
    const bool dropped = base_ != n_pinned_;  // sliding layers dropped rows: slots are not positions
    EMBER_ASSERT(!dropped || to == n_pinned_);
    for (std::int64_t il = 0; il < n_layer(); ++il) {
        if (at(il).window == 0 || !dropped) {
            move_rows(il, from, to, n);
        } else if (base_ <= from) {
            // The run [base, from + n) loses [base, from); the rest moves to its start.
            move_rows(il, slot(il, from), n_pinned_, n);
        }  // else the run starts after `from`: its rows stay, their positions go down.
    }
    if (dropped) base_ = base_ <= from ? n_pinned_ : base_ - (from - to);
}

KvCache::Held KvCache::held(std::int64_t layer, std::int64_t n_past) const noexcept {
    if (at(layer).window == 0 || base_ == n_pinned_) return {n_past, n_past};
    const std::int64_t prefix_end = std::min(n_pinned_, n_past);
    return {prefix_end, std::clamp(base_, prefix_end, n_past)};
}

std::int64_t KvCache::restore_base(std::span<const Held> saved, std::int64_t n_past,
                                   const std::string& name) const {
    EMBER_ASSERT(static_cast<std::int64_t>(saved.size()) == n_layer() && 0 <= n_past && n_past <= n_ctx_);
    // Whether the saved layer holds every position of [first, end).
    const auto has = [n_past](const Held& h, std::int64_t first, std::int64_t end) {
        return first >= end || end <= h.prefix_end || (first >= h.tail_begin && end <= n_past) ||
               h.prefix_end == h.tail_begin;
    };
    // The run keeps the latest rows that fit and never starts inside a gap of the saved layout.
    std::int64_t b = n_pinned_;
    for (std::int64_t il = 0; il < n_layer(); ++il) {
        const Layer& l = at(il);
        const Held& h = saved[static_cast<std::size_t>(il)];
        if (l.window == 0) continue;
        b = std::max(b, n_past - (l.capacity - n_pinned_));
        if (h.tail_begin > h.prefix_end) b = std::max(b, h.tail_begin);
    }
    b = std::min(b, std::max(n_pinned_, n_past));
    for (std::int64_t il = 0; il < n_layer(); ++il) {
        const Layer& l = at(il);
        const Held& h = saved[static_cast<std::size_t>(il)];
        const std::string where = name + ": layer " + std::to_string(il) + " of the saved cache ";
        if (l.window == 0) {
            if (!has(h, 0, n_past)) fail(where + "lacks positions this model's global layers read");
            continue;
        }
        // The next query reads (n_past - window, n_past): it must be held, and contiguous.
        const std::int64_t lo = std::max<std::int64_t>(0, n_past - l.window + 1);
        const bool window_ok = lo < n_pinned_ ? b == n_pinned_ : b <= lo;
        if (!has(h, 0, std::min(n_pinned_, n_past)) || !has(h, b, n_past) || !window_ok) {
            fail(where + "lacks positions this session reads (sliding window " +
                 std::to_string(l.window) + ", context shift keeping " + std::to_string(n_pinned_) + ")");
        }
    }
    return b;
}

}  // namespace ember::model

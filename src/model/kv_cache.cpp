#include "model/kv_cache.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/fail.hpp"
#include "runtime/memory.hpp"

namespace ember::model {
namespace {

// First block a sliding layer keeps for queries at `first` and later (pinned blocks aside).
std::int64_t keep_from_block(std::int64_t first, std::int64_t w, std::int64_t block) {
    return std::max<std::int64_t>(0, first - w + 1) / block;
}

// The pool of a cache with a pool of its own: every block of global layers; in sliding layers
// the pinned blocks, twice a window and a batch (what reserve() holds before it lets old
// blocks go, and a context shift's copy), and a copy-on-write spare per layer.
KvPoolOptions own_pool_options(const ModelConfig& c, std::int64_t n_ctx, std::int64_t n_batch,
                               std::int64_t n_pinned, KvType type) {
    constexpr std::int64_t kBlock = 16;
    n_ctx = std::max<std::int64_t>(n_ctx, 1);
    const std::int64_t blocks = (n_ctx + kBlock - 1) / kBlock;
    const std::int64_t pinned_blocks = (std::clamp<std::int64_t>(n_pinned, 0, n_ctx) + kBlock - 1) / kBlock;
    const std::int64_t window = (c.n_swa + std::max<std::int64_t>(n_batch, 1) + kBlock - 1) / kBlock;
    const std::int64_t sliding = std::min(blocks, pinned_blocks + 2 * window + 4);
    std::int64_t pages = c.n_layer;
    for (std::int64_t l = 0; l < c.n_layer; ++l) pages += c.is_local(l) ? sliding : blocks;
    KvPoolOptions o;
    o.block = kBlock;
    o.pages = pages;
    o.type = type;
    return o;
}

}  // namespace

std::uint64_t KvCache::bytes_needed(const ModelConfig& c, std::int64_t n_ctx, std::int64_t n_batch,
                                    std::int64_t n_pinned, KvType type) {
    const KvPoolOptions o = own_pool_options(c, n_ctx, n_batch, n_pinned, type);
    const auto row = static_cast<std::uint64_t>(kv_row_bytes(type, c.n_embd_kv(), c.head_dim));
    return saturating_mul(saturating_mul(static_cast<std::uint64_t>(o.pages * o.block), row), 2);
}

KvCache::KvCache(KvPool& pool, std::int64_t n_ctx, std::int64_t n_pinned)
    : pool_(&pool), n_ctx_(n_ctx), n_pinned_(std::clamp<std::int64_t>(n_pinned, 0, n_ctx)), block_(pool.block()) {
    EMBER_ASSERT(n_ctx > 0);
    const auto n_blocks = static_cast<std::size_t>((n_ctx + block_ - 1) / block_);
    pages_.assign(static_cast<std::size_t>(pool.config().n_layer), std::vector<std::int32_t>(n_blocks, -1));
}

KvCache::KvCache(const ModelConfig& c, std::int64_t n_ctx, std::int64_t n_batch, std::int64_t n_pinned, KvType type)
    : KvCache(std::make_unique<KvPool>(c, own_pool_options(c, n_ctx, n_batch, n_pinned, type)), n_ctx, n_pinned) {}

KvCache::KvCache(std::unique_ptr<KvPool> own, std::int64_t n_ctx, std::int64_t n_pinned)
    : KvCache(*own, n_ctx, n_pinned) {
    own_pool_ = std::move(own);
}

KvCache::KvCache(const KvCache& o) : n_ctx_(o.n_ctx_), n_pinned_(o.n_pinned_), block_(o.block_) {
    if (o.pool_ == nullptr) return;
    if (o.own_pool_ == nullptr) {
        *this = o.fork();
        return;
    }
    own_pool_ = std::make_unique<KvPool>(o.pool_->config(), o.pool_->options());
    pool_ = own_pool_.get();
    pages_.assign(o.pages_.size(), std::vector<std::int32_t>(o.pages_.empty() ? 0 : o.pages_[0].size(), -1));
    const bool copied = o.copy_to(*this);
    EMBER_ASSERT(copied);  // the same pool size holds the same pages
}

KvCache::~KvCache() {
    if (pool_ != nullptr) clear();
}

KvCache::KvCache(KvCache&& o) noexcept
    : own_pool_(std::move(o.own_pool_)), pool_(o.pool_), n_ctx_(o.n_ctx_), n_pinned_(o.n_pinned_), block_(o.block_), size_(o.size_),
      sliding_from_(o.sliding_from_), pages_(std::move(o.pages_)) {
    o.pool_ = nullptr;
    o.size_ = 0;
}

KvCache& KvCache::operator=(KvCache&& o) noexcept {
    if (this != &o) {
        if (pool_ != nullptr) clear();
        own_pool_ = std::move(o.own_pool_);
        pool_ = o.pool_;
        n_ctx_ = o.n_ctx_;
        n_pinned_ = o.n_pinned_;
        block_ = o.block_;
        size_ = o.size_;
        sliding_from_ = o.sliding_from_;
        pages_ = std::move(o.pages_);
        o.pool_ = nullptr;
        o.size_ = 0;
    }
    return *this;
}

std::int64_t KvCache::window(std::int64_t layer) const noexcept {
    return pool_->config().is_local(layer) ? pool_->config().n_swa : 0;
}

std::int32_t KvCache::page_of(std::int64_t layer, std::int64_t b) const noexcept {
    const auto& t = pages_[static_cast<std::size_t>(layer)];
    return b >= 0 && b < static_cast<std::int64_t>(t.size()) ? t[static_cast<std::size_t>(b)] : -1;
}

bool KvCache::holds(std::int64_t layer, std::int64_t pos) const noexcept {
    if (pos < 0 || pos >= size_ || page(layer, pos) < 0) return false;
    return window(layer) == 0 || pos < n_pinned_ || pos >= sliding_from_;
}

void KvCache::drop_sliding_before(std::int64_t pos) noexcept {
    const std::int64_t pinned_blocks = (n_pinned_ + block_ - 1) / block_;
    const std::int64_t w = pool_->config().n_swa;
    if (w == 0) return;
    const std::int64_t keep = keep_from_block(pos, w, block_);
    if (keep <= pinned_blocks) return;
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        if (window(l) > 0) release_layer_blocks(l, pinned_blocks, keep);
    }
    sliding_from_ = std::max(sliding_from_, keep * block_);
}

std::int64_t KvCache::attend_first(std::int64_t layer, std::int64_t pos) const noexcept {
    const std::int64_t w = window(layer);
    return w == 0 ? 0 : std::max<std::int64_t>(0, pos - w + 1);
}

std::int64_t KvCache::pages_needed(std::int64_t first, std::int64_t last) const noexcept {
    std::int64_t n = 0;
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        for (std::int64_t b = first / block_; b <= last / block_; ++b) {
            const std::int32_t p = page_of(l, b);
            n += (p < 0 || pool_->refs(p) > 1) ? 1 : 0;
        }
    }
    return n;
}

void KvCache::release_layer_blocks(std::int64_t layer, std::int64_t b0, std::int64_t b1) noexcept {
    auto& t = pages_[static_cast<std::size_t>(layer)];
    for (std::int64_t b = std::max<std::int64_t>(b0, 0); b < b1 && b < static_cast<std::int64_t>(t.size()); ++b) {
        auto& p = t[static_cast<std::size_t>(b)];
        if (p >= 0) pool_->unref(p);
        p = -1;
    }
}

void KvCache::own_block(std::int64_t layer, std::int64_t b) noexcept {
    auto& p = pages_[static_cast<std::size_t>(layer)][static_cast<std::size_t>(b)];
    if (p >= 0 && pool_->refs(p) == 1) return;
    const std::int32_t fresh = pool_->take();
    EMBER_ASSERT(fresh >= 0);  // counted by the caller
    if (p >= 0) {  // shared: copy the rows before writing (copy-on-write)
        pool_->copy_page(p, fresh);
        pool_->unref(p);
        pool_->count_copy();
    }
    p = fresh;
}

bool KvCache::reserve(std::int64_t first, std::int64_t last) {
    EMBER_ASSERT(0 <= first && first <= size_ && first <= last && last < n_ctx_);
    if (first < rewind_limit()) {
        fail("the sliding-window cache no longer holds what position " + std::to_string(first) +
             " reads (it can restart from position " + std::to_string(rewind_limit()) + ")");
    }
    const std::int64_t needed = pages_needed(first, last);
    if (!pool_->can_give(needed)) return false;
    // Sliding layers let go of what no query at `first` or later reads (pinned blocks stay).
    drop_sliding_before(first);
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        for (std::int64_t b = first / block_; b <= last / block_; ++b) own_block(l, b);
    }
    size_ = std::max(size_, last + 1);
    return true;
}

std::int64_t KvCache::rewind_limit() const noexcept {
    return sliding_from_ > 0 ? sliding_from_ + pool_->config().n_swa - 1 : 0;
}

void KvCache::truncate(std::int64_t n) noexcept {
    EMBER_ASSERT(0 <= n && n <= size_);
    const std::int64_t from_block = (n + block_ - 1) / block_;
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        release_layer_blocks(l, from_block, static_cast<std::int64_t>(pages_[static_cast<std::size_t>(l)].size()));
    }
    size_ = n;
    if (n == 0) sliding_from_ = 0;
}

bool KvCache::move_down(std::int64_t from, std::int64_t to, std::int64_t n) {
    EMBER_ASSERT(0 <= to && to < from && from + n == size_);
    const std::int64_t d = from - to, end = to + n;
    const std::int64_t pinned_blocks = (n_pinned_ + block_ - 1) / block_;
    // Rows each layer must hold afterwards: [lo, end) (sliding: the window before `end`).
    auto lo_of = [&](std::int64_t l) {
        const std::int64_t w = window(l);
        return w == 0 ? to : std::max(to, end - w + 1);
    };
    std::int64_t needed = 0;
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        for (std::int64_t b = lo_of(l) / block_; b * block_ < end; ++b) {
            const std::int32_t p = page_of(l, b);
            needed += (p < 0 || pool_->refs(p) > 1) ? 1 : 0;
        }
    }
    if (!pool_->can_give(needed)) return false;
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        const std::int64_t lo = lo_of(l);
        for (std::int64_t b = lo / block_; b * block_ < end; ++b) own_block(l, b);
        // Ascending: a row is read (at q + d) before any later write could reach it.
        const KvType type = pool_->type();
        const std::int64_t hd = pool_->config().head_dim;
        for (std::int64_t q = lo; q < end; ++q) {
            for (std::int64_t h = 0; h < pool_->config().n_head_kv; ++h) {
                kv_copy_key(type, pool_->k_grid(page(l, q + d), h), (q + d) % block_, pool_->k_grid(page(l, q), h),
                            q % block_, block_, hd);
                kv_copy_value(type, pool_->v_slabs(page(l, q + d), h), (q + d) % block_, pool_->v_slabs(page(l, q), h),
                              q % block_, block_, hd);
            }
        }
        const std::int64_t end_block = (end + block_ - 1) / block_;
        release_layer_blocks(l, end_block, static_cast<std::int64_t>(pages_[static_cast<std::size_t>(l)].size()));
        if (window(l) > 0) release_layer_blocks(l, pinned_blocks, lo / block_);
    }
    const std::int64_t w = pool_->config().n_swa;
    sliding_from_ = w > 0 && end - w + 1 > to ? end - w + 1 : 0;
    size_ = end;
    return true;
}

void KvCache::store(std::int64_t layer, std::int64_t pos, const float* keys, const float* values) noexcept {
    store_keys(layer, pos, keys);
    const ModelConfig& c = pool_->config();
    const std::int32_t pg = page(layer, pos);
    for (std::int64_t h = 0; h < c.n_head_kv; ++h) {
        kv_store_value(pool_->type(), values + h * c.head_dim, pool_->v_slabs(pg, h), block_, pos % block_, c.head_dim);
    }
}

void KvCache::store_keys(std::int64_t layer, std::int64_t pos, const float* keys) noexcept {
    const ModelConfig& c = pool_->config();
    const std::int32_t pg = page(layer, pos);
    for (std::int64_t h = 0; h < c.n_head_kv; ++h) {
        kv_store_key(pool_->type(), keys + h * c.head_dim, pool_->k_grid(pg, h), block_, pos % block_, c.head_dim);
    }
}

void KvCache::load_keys(std::int64_t layer, std::int64_t pos, float* keys) const noexcept {
    const ModelConfig& c = pool_->config();
    for (std::int64_t h = 0; h < c.n_head_kv; ++h) {
        kv_load_key(pool_->type(), pool_->k_grid(page(layer, pos), h), block_, pos % block_, c.head_dim, keys + h * c.head_dim);
    }
}

void KvCache::load_values(std::int64_t layer, std::int64_t pos, float* values) const noexcept {
    const ModelConfig& c = pool_->config();
    for (std::int64_t h = 0; h < c.n_head_kv; ++h) {
        kv_load_value(pool_->type(), pool_->v_slabs(page(layer, pos), h), block_, pos % block_, c.head_dim, values + h * c.head_dim);
    }
}

KvCache KvCache::fork() const {
    KvCache c(*pool_, n_ctx_, n_pinned_);
    c.pages_ = pages_;
    for (const auto& t : c.pages_) {
        for (const std::int32_t p : t) {
            if (p >= 0) pool_->ref(p);
        }
    }
    c.size_ = size_;
    c.sliding_from_ = sliding_from_;
    return c;
}

bool KvCache::copy_to(KvCache& dst) const {
    EMBER_ASSERT(dst.size_ == 0 && dst.n_ctx_ >= size_ && dst.pool_->row_bytes() == pool_->row_bytes() &&
                 dst.block_ == block_);
    std::int64_t needed = 0;
    for (const auto& t : pages_) {
        for (const std::int32_t p : t) needed += p >= 0 ? 1 : 0;
    }
    if (!dst.pool_->can_give(needed)) return false;
    for (std::size_t l = 0; l < pages_.size(); ++l) {
        for (std::size_t b = 0; b < pages_[l].size(); ++b) {
            const std::int32_t p = pages_[l][b];
            if (p < 0) continue;
            const std::int32_t fresh = dst.pool_->take();
            EMBER_ASSERT(fresh >= 0);
            dst.pool_->copy_page_from(*pool_, p, fresh);
            dst.pages_[l][b] = fresh;
        }
    }
    dst.size_ = size_;
    dst.sliding_from_ = sliding_from_;
    return true;
}

KvCache::Held KvCache::held(std::int64_t layer, std::int64_t n_past) const noexcept {
    if (window(layer) == 0 || sliding_from_ == 0) return {n_past, n_past};
    const std::int64_t prefix_end = std::min(n_pinned_, n_past);
    return {prefix_end, std::clamp(sliding_from_, prefix_end, n_past)};
}

bool KvCache::prepare_restore(std::int64_t n_past) {
    EMBER_ASSERT(size_ == 0 && n_past <= n_ctx_);
    if (n_past == 0) return true;
    const std::int64_t pinned_blocks = (n_pinned_ + block_ - 1) / block_;
    const std::int64_t last_block = (n_past - 1) / block_;
    auto first_block = [&](std::int64_t l) {
        const std::int64_t w = window(l);
        return w == 0 ? 0 : keep_from_block(n_past, w, block_);
    };
    std::int64_t needed = 0;
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        const std::int64_t b0 = first_block(l);
        needed += last_block + 1 - b0 + std::min(pinned_blocks, b0);
    }
    if (!pool_->can_give(needed)) return false;
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        const std::int64_t b0 = first_block(l);
        auto& t = pages_[static_cast<std::size_t>(l)];
        for (std::int64_t b = 0; b <= last_block; ++b) {
            if (b >= b0 || b < pinned_blocks) {
                t[static_cast<std::size_t>(b)] = pool_->take();
                EMBER_ASSERT(t[static_cast<std::size_t>(b)] >= 0);
            }
        }
    }
    size_ = n_past;
    const std::int64_t w = pool_->config().n_swa;
    sliding_from_ = w > 0 && n_past - w + 1 > n_pinned_ ? n_past - w + 1 : 0;
    return true;
}

void KvCache::check_restorable(std::span<const Held> saved, std::int64_t n_past, const std::string& name) const {
    EMBER_ASSERT(static_cast<std::int64_t>(saved.size()) == n_layer());
    const auto has = [n_past](const Held& h, std::int64_t first, std::int64_t end) {
        return first >= end || end <= h.prefix_end || (first >= h.tail_begin && end <= n_past) ||
               h.prefix_end == h.tail_begin;
    };
    for (std::int64_t l = 0; l < n_layer(); ++l) {
        const Held& h = saved[static_cast<std::size_t>(l)];
        const std::string where = name + ": layer " + std::to_string(l) + " of the saved cache ";
        const std::int64_t w = window(l);
        if (w == 0) {
            if (!has(h, 0, n_past)) fail(where + "lacks positions this model's global layers read");
            continue;
        }
        const std::int64_t lo = std::max<std::int64_t>(0, n_past - w + 1);
        if (!has(h, 0, std::min(n_pinned_, n_past)) || !has(h, std::max(lo, std::min(n_pinned_, n_past)), n_past)) {
            fail(where + "lacks positions this session reads (sliding window " + std::to_string(w) +
                 ", context shift keeping " + std::to_string(n_pinned_) + ")");
        }
    }
}

}  // namespace ember::model

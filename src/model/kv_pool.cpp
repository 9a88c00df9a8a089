#include "model/kv_pool.hpp"

#include <algorithm>
#include <cstring>

#include "model/kv_cache.hpp"
#include "runtime/fail.hpp"
#include "runtime/zeroed_memory.hpp"

namespace ember::model {

KvPool::KvPool(const ModelConfig& config, KvPoolOptions o)
    : config_(&config), options_(o), block_(o.block), n_pages_(o.pages), n_layer_(config.n_layer), type_(o.type),
      prefix_cache_(o.prefix_cache) {
    if (block_ <= 0 || block_ > 4096) {
        fail("KV cache block of " + std::to_string(block_) + " positions (must be 1..4096)");
    }
    if (n_pages_ <= 0 || n_pages_ > (std::int64_t{1} << 30)) {
        fail("KV cache of " + std::to_string(n_pages_) + " pages (must be 1..2^30)");
    }
    row_bytes_ = kv_row_bytes(type_, config.n_embd_kv(), config.head_dim);  // throws for unfit types
    head_bytes_ = kv_row_bytes(type_, config.head_dim, config.head_dim);
    EMBER_ASSERT(row_bytes_ == head_bytes_ * static_cast<std::size_t>(config.n_head_kv));
    page_head_bytes_ = head_bytes_ * static_cast<std::size_t>(block_);
    plane_bytes_ = page_head_bytes_ * static_cast<std::size_t>(n_pages_);
    const std::size_t bytes = row_bytes_ * static_cast<std::size_t>(block_) * static_cast<std::size_t>(n_pages_);
    // In huge pages (touched as positions fill): a decode step reads every cached row of every
    // layer, and in 4 KiB pages each few keys of a head cost a TLB miss.
    k_ = allocate_zeroed_pages(bytes, "KV cache (keys)");
    v_ = allocate_zeroed_pages(bytes, "KV cache (values)");
    refs_.assign(static_cast<std::size_t>(n_pages_), 0);
    free_.reserve(static_cast<std::size_t>(n_pages_));
    for (std::int64_t p = n_pages_ - 1; p >= 0; --p) free_.push_back(static_cast<std::int32_t>(p));
    nodes_.emplace_back();  // the root: no tokens, no pages
    nodes_[0].live = true;
}

KvPool::~KvPool() = default;

void KvPool::copy_page(std::int32_t from, std::int32_t to) noexcept { copy_page_from(*this, from, to); }

void KvPool::copy_page_from(const KvPool& src, std::int32_t from, std::int32_t to) noexcept {
    EMBER_ASSERT(src.row_bytes_ == row_bytes_ && src.block_ == block_ && src.type_ == type_);
    for (std::int64_t h = 0; h < config_->n_head_kv; ++h) {
        std::memcpy(k_.get() + key_offset(to, h), src.k_.get() + src.key_offset(from, h), page_head_bytes_);
        std::memcpy(v_.get() + key_offset(to, h), src.v_.get() + src.key_offset(from, h), page_head_bytes_);
    }
}

std::int32_t KvPool::take() {
    while (free_.empty()) {
        if (!evict_one()) return -1;
    }
    const std::int32_t p = free_.back();
    free_.pop_back();
    refs_[static_cast<std::size_t>(p)] = 1;
    return p;
}

void KvPool::ref(std::int32_t page) noexcept {
    EMBER_ASSERT(refs_[static_cast<std::size_t>(page)] > 0);
    ++refs_[static_cast<std::size_t>(page)];
}

void KvPool::unref(std::int32_t page) noexcept {
    auto& r = refs_[static_cast<std::size_t>(page)];
    EMBER_ASSERT(r > 0);
    if (--r == 0) free_.push_back(page);
}

bool KvPool::only_cached(const Node& node) const noexcept {
    for (const std::int32_t p : node.pages) {
        if (p >= 0 && refs_[static_cast<std::size_t>(p)] != 1) return false;
    }
    return true;
}

std::int64_t KvPool::available_pages() const {
    std::int64_t n = free_pages();
    if (nodes_.size() <= 1) return n;
    // Post-order walk: a subtree can go when every node in it holds only cached pages.
    struct Frame {
        std::int32_t node;
        std::size_t next_child;
        bool ok;
    };
    std::vector<Frame> stack{{0, 0, true}};
    while (!stack.empty()) {
        Frame& f = stack.back();
        const Node& node = nodes_[static_cast<std::size_t>(f.node)];
        if (f.next_child < node.children.size()) {
            stack.push_back({node.children[f.next_child++], 0, true});
            continue;
        }
        bool ok = f.ok && (f.node == 0 || only_cached(node));
        if (ok && f.node != 0) {
            for (const std::int32_t p : node.pages) n += p >= 0 ? 1 : 0;
        }
        stack.pop_back();
        if (!stack.empty() && !ok) stack.back().ok = false;
    }
    return n;
}

bool KvPool::evict_one() {
    std::int32_t victim = -1;
    for (std::size_t i = 1; i < nodes_.size(); ++i) {
        const Node& node = nodes_[i];
        if (!node.live || !node.children.empty() || !only_cached(node)) continue;
        if (victim < 0 || node.last_use < nodes_[static_cast<std::size_t>(victim)].last_use) {
            victim = static_cast<std::int32_t>(i);
        }
    }
    if (victim < 0) return false;
    drop_node(victim);
    stats_.evicted += 1;
    return true;
}

void KvPool::drop_node(std::int32_t id) {
    Node& node = nodes_[static_cast<std::size_t>(id)];
    for (const std::int32_t p : node.pages) {
        if (p >= 0) unref(p);
    }
    auto& siblings = nodes_[static_cast<std::size_t>(node.parent)].children;
    siblings.erase(std::find(siblings.begin(), siblings.end(), id));
    node = Node{};
    free_nodes_.push_back(id);
    stats_.nodes -= 1;
}

std::int64_t KvPool::match(std::span<const Token> tokens, std::int64_t limit, KvCache& cache) {
    EMBER_ASSERT(cache.pool_ == this && cache.size_ == 0);
    limit = std::min<std::int64_t>(limit, static_cast<std::int64_t>(tokens.size()));
    if (!prefix_cache_ || limit <= 0) return 0;
    stats_.lookups += 1;
    // Walk full blocks while a child holds exactly the next tokens; then the child sharing the
    // longest start of what is left (a partial block, or a diverging one).
    std::vector<std::int32_t> path;
    std::int64_t matched = 0, node = 0;
    for (;;) {
        const std::int64_t want = std::min<std::int64_t>(block_, limit - matched);
        if (want <= 0) break;
        std::int32_t full = -1, best = -1;
        std::int64_t best_len = 0;
        for (const std::int32_t c : nodes_[static_cast<std::size_t>(node)].children) {
            const auto& t = nodes_[static_cast<std::size_t>(c)].tokens;
            std::int64_t len = 0;
            const std::int64_t n = std::min<std::int64_t>(want, static_cast<std::int64_t>(t.size()));
            while (len < n && t[static_cast<std::size_t>(len)] == tokens[static_cast<std::size_t>(matched + len)]) ++len;
            if (len == block_ && static_cast<std::int64_t>(t.size()) == block_) {
                full = c;
                break;
            }
            if (len > best_len) {
                best_len = len;
                best = c;
            }
        }
        if (full >= 0) {
            path.push_back(full);
            matched += block_;
            node = full;
            continue;
        }
        if (best >= 0) {
            path.push_back(best);
            matched += best_len;
        }
        break;
    }
    // Sliding-window layers: the window before `matched` must still be there.
    const std::int64_t w = config_->n_swa;
    while (matched > 0 && w > 0) {
        const std::int64_t b0 = std::max<std::int64_t>(0, matched - w + 1) / block_;
        std::int64_t missing = -1;
        for (std::int64_t b = b0; b * block_ < matched && missing < 0; ++b) {
            for (const std::int32_t p : nodes_[static_cast<std::size_t>(path[static_cast<std::size_t>(b)])].pages) {
                if (p < 0) missing = b;
            }
        }
        if (missing < 0) break;
        matched = missing * block_;
    }
    if (matched == 0) return 0;
    const std::int64_t n_blocks = (matched + block_ - 1) / block_;
    for (std::int64_t b = 0; b < n_blocks; ++b) {
        Node& nd = nodes_[static_cast<std::size_t>(path[static_cast<std::size_t>(b)])];
        nd.last_use = ++clock_;
        for (std::int64_t l = 0; l < n_layer_; ++l) {
            const std::int32_t p = nd.pages[static_cast<std::size_t>(l)];
            if (p < 0) continue;
            ref(p);
            cache.pages_[static_cast<std::size_t>(l)][static_cast<std::size_t>(b)] = p;
        }
    }
    cache.size_ = matched;
    cache.drop_sliding_before(matched);
    stats_.hits += 1;
    stats_.hit_tokens += matched;
    return matched;
}

void KvPool::insert(std::span<const Token> tokens, std::int64_t n, const KvCache& cache, bool partial) {
    EMBER_ASSERT(cache.pool_ == this && n <= cache.size_ && n <= static_cast<std::int64_t>(tokens.size()));
    if (!prefix_cache_) return;
    std::int32_t node = 0;
    for (std::int64_t b = 0; b * block_ < n; ++b) {
        const std::int64_t start = b * block_, len = std::min(block_, n - start);
        if (len < block_ && !partial) break;
        const auto first = tokens.begin() + start;
        std::int32_t found = -1;
        for (const std::int32_t c : nodes_[static_cast<std::size_t>(node)].children) {
            const auto& t = nodes_[static_cast<std::size_t>(c)].tokens;
            if (static_cast<std::int64_t>(t.size()) == len && std::equal(t.begin(), t.end(), first)) {
                found = c;
                break;
            }
        }
        if (found < 0) {
            // A page a sliding layer let go, or none at all: nothing to cache from here on.
            bool any = false;
            for (std::int64_t l = 0; l < n_layer_; ++l) any = any || cache.page_of(l, b) >= 0;
            if (!any) return;
            if (free_nodes_.empty()) {
                found = static_cast<std::int32_t>(nodes_.size());
                nodes_.emplace_back();
            } else {
                found = free_nodes_.back();
                free_nodes_.pop_back();
            }
            Node& nd = nodes_[static_cast<std::size_t>(found)];
            nd.live = true;
            nd.parent = node;
            nd.tokens.assign(first, first + len);
            nd.pages.resize(static_cast<std::size_t>(n_layer_));
            for (std::int64_t l = 0; l < n_layer_; ++l) {
                const std::int32_t p = cache.page_of(l, b);
                nd.pages[static_cast<std::size_t>(l)] = p;
                if (p >= 0) ref(p);
            }
            nodes_[static_cast<std::size_t>(node)].children.push_back(found);
            stats_.nodes += 1;
        }
        nodes_[static_cast<std::size_t>(found)].last_use = ++clock_;
        node = found;
    }
}

}  // namespace ember::model

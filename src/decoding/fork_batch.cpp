#include "decoding/fork_batch.hpp"

#include <new>
#include <string>

#include "runtime/fail.hpp"
#include "runtime/memory.hpp"

namespace ember::decoding {
namespace {

// Pages a cache holds (what a fork shares instead of copying).
std::int64_t held_pages(const model::KvCache& c) {
    std::int64_t n = 0;
    const std::int64_t blocks = (c.size() + c.block() - 1) / c.block();
    for (std::int64_t l = 0; l < c.n_layer(); ++l) {
        for (std::int64_t b = 0; b < blocks; ++b) n += c.page_of(l, b) >= 0 ? 1 : 0;
    }
    return n;
}

}  // namespace

ForkBatch::ForkBatch(const detail::SessionAccess::Impl& session, int max_rows, int max_new) : s_(session) {
    const auto& c = session.model_impl->config;
    constexpr std::int64_t kBlock = 16;  // a lone Session's block: its pages copy as they are
    const std::int64_t positions = std::int64_t{session.n_past} + max_new;
    // Every sequence (and the prompt) at its full length, and a copy-on-write spare per layer.
    const std::int64_t blocks = (positions + kBlock - 1) / kBlock + 1;
    const std::int64_t pages = (std::int64_t{max_rows} + 1) * c.n_layer * blocks;
    if (pages >= (std::int64_t{1} << 31)) fail("decoding: " + std::to_string(max_rows) + " sequences need too many KV pages");
    model::KvPoolOptions po;
    po.block = kBlock;
    po.pages = pages;
    po.type = session.options.kv_type;
    const std::uint64_t row = model::kv_row_bytes(po.type, c.n_embd_kv(), c.head_dim);
    const std::uint64_t pool_bytes = 2 * row * static_cast<std::uint64_t>(pages * kBlock);
    const std::int64_t scratch_bytes = model::ForwardScratch::estimate_bytes(c, c.n_vocab, max_rows, session.n_ctx,
                                                                              max_rows, session.n_threads);
    const std::string what = "decoding " + std::to_string(max_rows) + " sequences of " + std::to_string(positions) +
                             " tokens (KV pool " + format_bytes(pool_bytes) + ")";
    check_memory(pool_bytes + static_cast<std::uint64_t>(scratch_bytes), what);
    try {
        pool_ = std::make_unique<model::KvPool>(c, po);
        prompt_ = model::KvCache(*pool_, session.n_ctx, session.options.context_shift ? session.options.n_keep : 0);
        const bool copied = session.cache.copy_to(prompt_);
        EMBER_ASSERT(copied);  // the pool was sized for it
        prompt_.truncate(session.n_past);  // a cancelled pass may have reserved positions past n_past
        scratch_ = model::ForwardScratch(c, session.model_impl->weights, max_rows, session.n_ctx, max_rows,
                                         session.n_threads);
        rows_.reserve(static_cast<std::size_t>(max_rows));
    } catch (const std::bad_alloc&) {
        fail(what + ": out of memory");
    }
}

model::KvCache ForkBatch::fork(const model::KvCache& cache) {
    shared_ += held_pages(cache);
    return cache.fork();
}

bool ForkBatch::run(std::span<const Token> tokens, std::span<const int> pos, std::span<model::KvCache* const> caches) {
    EMBER_ASSERT(tokens.size() == pos.size() && tokens.size() == caches.size() && !tokens.empty());
    rows_.clear();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const bool reserved = caches[i]->reserve(pos[i], pos[i]);
        EMBER_ASSERT(reserved);  // the pool holds every sequence at its full length
        rows_.push_back({tokens[i], pos[i], static_cast<std::int32_t>(i), true});
    }
    steps_ += 1;
    n_rows_ += static_cast<std::int64_t>(rows_.size());
    return s_.model_impl->forward.run(rows_, caches, scratch_, s_.n_threads, s_.cancel);
}

DecodingStats ForkBatch::stats() const {
    DecodingStats st;
    st.steps = steps_;
    st.rows = n_rows_;
    st.kv_blocks_shared = shared_;
    st.kv_blocks_copied = pool_->copies();
    return st;
}

}  // namespace ember::decoding

// What beam search and parallel samples share: a paged KV pool holding a Session's prompt
// once, sequences forked from it copy-on-write, and one forward pass per step over one new
// token of each of them (the Session's own Decoder, scratch sized for the rows).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "api/session_impl.hpp"
#include "ember/decoding.hpp"
#include "model/batch.hpp"
#include "model/decoder.hpp"
#include "model/kv_cache.hpp"
#include "model/kv_pool.hpp"

namespace ember::decoding {

class ForkBatch {
public:
    /// Room for `max_rows` sequences growing by up to `max_new` positions after the session's
    /// n_past (plus one copy-on-write page per layer and sequence). Copies the session's cache.
    ForkBatch(const detail::SessionAccess::Impl& session, int max_rows, int max_new);

    /// A new sequence sharing every page of the prompt.
    model::KvCache fork_prompt() { return fork(prompt_); }
    /// A new sequence sharing every page of `cache`.
    model::KvCache fork(const model::KvCache& cache);

    /// One new token per row (row i: tokens[i] at position pos[i] of *caches[i]), in ONE forward
    /// pass. Returns false when the session's cancel callback stopped it. logits(i) afterwards.
    bool run(std::span<const Token> tokens, std::span<const int> pos, std::span<model::KvCache* const> caches);
    std::span<const float> logits(std::size_t row) const noexcept { return scratch_.logits(static_cast<std::int64_t>(row)); }

    /// The stats so far (steps, rows, pages shared and copied); seconds stay 0.
    DecodingStats stats() const;

private:
    const detail::SessionAccess::Impl& s_;
    std::unique_ptr<model::KvPool> pool_;
    model::KvCache prompt_;
    model::ForwardScratch scratch_;
    std::vector<model::BatchRow> rows_;
    std::int64_t steps_ = 0, n_rows_ = 0, shared_ = 0;
};

}  // namespace ember::decoding

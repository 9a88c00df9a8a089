// The state behind ember::Session, shared by session.cpp (the token loop), session_generate.cpp
// and session_state.cpp.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "api/model_impl.hpp"
#include "ember/session.hpp"
#include "model/batch.hpp"
#include "model/kv_cache.hpp"
#include "model/decoder.hpp"
#include "tokenizer/tokenizer.hpp"

namespace ember {

namespace detail {
class Generation;
}

using SessionClock = std::chrono::steady_clock;
static_assert(SessionClock::is_steady, "session metrics need a monotonic clock");

struct Session::Impl {
    Impl(const Model& m, SessionOptions o);

    bool valid_token(Token t) const noexcept { return t >= 0 && t < model_impl->config.n_vocab; }
    /// Throws ember::Error naming the first id outside the vocabulary ("<what><index> has id ...").
    void check_ids(std::span<const Token> ids, const char* what) const;
    /// Whether a context shift can make room (context_shift on and tokens after n_keep).
    bool can_shift() const noexcept;
    /// One context shift: drops (n_past - n_keep) / 2 tokens after the first n_keep.
    void shift();
    /// Runs chunk[0, n) at positions n_past.. as one forward pass; the logits of its last row
    /// become logits(), and with `all_logits` every row's are kept (logits_at). Nothing changes
    /// when cancelled. The caller checks ids, n <= n_batch and room in the context.
    Status run_rows(const Token* chunk, int n, bool all_logits);
    Status run_chunk(const Token* chunk, int n) { return run_rows(chunk, n, options.logits_all); }
    /// Keeps the first n tokens (0 <= n <= n_past, within the rewind limit), with logits() after
    /// token n - 1: kept from the last pass or recomputed (cancellable: nothing changes then). The
    /// text stream is left alone (a speculative rollback drops only tokens never emitted).
    Status rollback(int n);
    /// Keeps the first n tokens without logits (unless the last pass kept token n - 1's): for a
    /// caller that runs more tokens next, which compute them.
    void drop_after(int n);
    /// The kept logits of the last pass for the token at `pos`, or an empty span.
    std::span<const float> kept_logits(int pos) const noexcept;
    /// Session::generate with GenerateOptions::speculative (session_speculative.cpp).
    GenerateResult generate_speculative(Session& self, Sampler& sampler, Speculator& speculator,
                                        detail::Generation& gen);

    Model model;
    std::shared_ptr<const detail::ModelImpl> model_impl;
    SessionOptions options;
    int n_ctx = 0, n_threads = 1, n_batch = 1, n_past = 0;
    // The logits rows the last pass kept in `scratch`: n_logit_rows rows for the tokens at
    // positions logit_rows_pos.. (every row of the pass when rows_kept, else its last one).
    int n_logit_rows = 0, logit_rows_pos = 0;
    bool rows_kept = false;
    model::KvCache cache;
    model::ForwardScratch scratch;
    std::vector<model::BatchRow> rows;  // [n_batch]
    std::vector<Token> tokens;          // [n_past], capacity n_ctx
    std::vector<float> logits;          // [n_vocab] after the last processed token
    std::vector<float> rope_scratch;    // [2 n_rot + n_embd_kv] cos/sin and a key row for context shifts
    bool has_logits = false;
    std::optional<tokenizer::StreamDecoder> stream;
    std::function<bool()> cancel;
    std::function<void(std::int64_t, std::int64_t)> progress;
    Metrics metrics;
};

/// The library's access to a Session's state (Session befriends it; applications cannot).
struct detail::SessionAccess {
    using Impl = Session::Impl;
    static Impl& impl(Session& s) noexcept { return *s.impl_; }
    static const Impl& impl(const Session& s) noexcept { return *s.impl_; }
};

inline double seconds_since(SessionClock::time_point t0) {
    return std::chrono::duration<double>(SessionClock::now() - t0).count();
}

}  // namespace ember

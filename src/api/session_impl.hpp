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

using SessionClock = std::chrono::steady_clock;
static_assert(SessionClock::is_steady, "session metrics need a monotonic clock");

struct Session::Impl {
    Impl(const Model& m, SessionOptions o);

    bool valid_token(Token t) const noexcept { return t >= 0 && t < model_impl->config.n_vocab; }
    /// Whether a context shift can make room (context_shift on and tokens after n_keep).
    bool can_shift() const noexcept;
    /// One context shift: drops (n_past - n_keep) / 2 tokens after the first n_keep.
    void shift();
    /// Runs chunk[0, n) at positions n_past.. as one forward pass; the logits of its last row
    /// become logits(). Nothing changes when cancelled.
    Status run_chunk(const Token* chunk, int n);

    Model model;
    std::shared_ptr<const detail::ModelImpl> model_impl;
    SessionOptions options;
    int n_ctx = 0, n_threads = 1, n_batch = 1, n_past = 0, n_logit_rows = 0;
    int logit_rows_pos = 0;  // position of the first row of the last chunk (logits_all rows)
    model::KvCache cache;
    model::ForwardScratch scratch;
    std::vector<model::BatchRow> rows;  // [n_batch]
    std::vector<Token> tokens;          // [n_past], capacity n_ctx
    std::vector<float> logits;          // [n_vocab] after the last processed token
    std::vector<float> rope_scratch;    // [2 n_rot] cos/sin for context shifts
    bool has_logits = false;
    std::optional<tokenizer::StreamDecoder> stream;
    std::function<bool()> cancel;
    Metrics metrics;
};

inline double seconds_since(SessionClock::time_point t0) {
    return std::chrono::duration<double>(SessionClock::now() - t0).count();
}

}  // namespace ember

// The state behind ember::Engine: the request queue (shared with submitting threads under a
// mutex) and the running sequences (owned by the worker thread), see engine.cpp.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "api/generation.hpp"
#include "api/model_impl.hpp"
#include "ember/engine.hpp"
#include "model/batch.hpp"
#include "model/kv_cache.hpp"
#include "tokenizer/tokenizer.hpp"

namespace ember {

using EngineClock = std::chrono::steady_clock;

namespace detail {

/// What a RequestHandle and the engine share about one request.
struct RequestShared {
    std::uint64_t id = 0;
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    std::condition_variable ready;
    bool done = false;  // under mutex
    RequestResult result;  // set once, before done
};

}  // namespace detail

struct Engine::Impl {
    Impl(const Model& m, EngineOptions o);

    /// A request waiting for a sequence.
    struct Queued {
        std::shared_ptr<detail::RequestShared> shared;
        Request request;
        EngineClock::time_point submitted;
    };

    /// A request holding a sequence: its tokens, KV cache, text stream and generation state.
    /// Held by unique_ptr: `generation` refers to `request.options` and `stream`.
    struct Running {
        std::shared_ptr<detail::RequestShared> shared;
        Request request;
        EngineClock::time_point submitted, started, first_token;
        int cache = -1;                 // index into caches
        std::vector<Token> tokens;      // prompt, then the generated tokens fed back
        int n_prompt = 0, n_past = 0;   // n_past: tokens in the KV cache
        Token next = -1;                // sampled token to decode at the next step (-1: prefilling)
        std::optional<tokenizer::StreamDecoder> stream;
        std::optional<detail::Generation> generation;
        bool finished = false;
    };

    // ---- worker thread ---------------------------------------------------------------------
    void work();
    /// Takes queued requests into free sequences; returns false when stopping.
    bool admit(std::unique_lock<std::mutex>& lock);
    /// One forward pass over the decode rows and prompt chunks; then sampling.
    void step();
    /// After the logits of a sequence's last token: stop, or sample the token to decode next.
    void advance(Running& r, std::span<const float> logits);
    void finish(Running& r, StopReason reason, Status status, std::string error = {});
    /// Ends a request that never ran (cancelled while queued, or the engine is stopping).
    void cancel_queued(Queued& q);
    /// Delivers a result (on_done, then the handle) and forgets the request.
    void deliver(const std::shared_ptr<detail::RequestShared>& shared, Request& request,
                 RequestResult result);

    Model model;
    std::shared_ptr<const detail::ModelImpl> model_impl;
    EngineOptions options;
    int n_ctx = 0, n_threads = 1;

    // Shared with submitting threads, under `mutex`.
    mutable std::mutex mutex;
    std::condition_variable wake;  // the worker: work queued, or stopping
    std::condition_variable idle;  // wait_idle(): nothing queued or running
    std::deque<Queued> queue;
    std::vector<std::shared_ptr<detail::RequestShared>> live;  // queued or running
    bool stopping = false;
    std::uint64_t next_id = 1;
    EngineStats stats;

    // Worker only.
    std::atomic<bool> abort{false};  // stops a forward pass midway (destruction)
    std::vector<std::unique_ptr<Running>> running;
    std::vector<model::KvCache> caches;  // one per sequence slot, allocated on first use
    std::vector<int> free_caches;
    model::ForwardScratch scratch;
    std::vector<model::BatchRow> rows;
    std::vector<model::KvCache*> row_caches;
    std::thread worker;
};

}  // namespace ember

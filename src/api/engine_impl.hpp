// The state behind ember::Engine: the submission queue (shared with submitting threads under a
// mutex), and the waiting and running requests with their paged KV caches (owned by the worker
// thread), see engine.cpp.
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
#include "model/kv_pool.hpp"
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
    bool done = false;     // under mutex
    RequestResult result;  // set once, before done
};

}  // namespace detail

struct Engine::Impl {
    Impl(const Model& m, EngineOptions o);

    /// A request as submitted, waiting for the worker to pick it up.
    struct Submitted {
        std::shared_ptr<detail::RequestShared> shared;
        Request request;
        EngineClock::time_point submitted;
    };

    /// A request the worker holds: waiting for a sequence, or running. Held by unique_ptr:
    /// `generation` refers to `request.options` and `stream`.
    struct Sequence {
        std::shared_ptr<detail::RequestShared> shared;
        Request request;
        EngineClock::time_point submitted, started, first_token;
        bool started_once = false;
        std::uint64_t admitted = 0;     // admission order (the newest is paused first)
        model::KvCache cache;           // empty while waiting
        std::vector<Token> tokens;      // prompt, then the generated tokens fed back
        int n_prompt = 0;               // tokens of the prompt
        int n_target = 0;               // tokens to run before the next sample (prompt; after a
                                        // pause, everything so far)
        int n_past = 0;                 // tokens in the KV cache
        int cached_tokens = 0;          // prompt tokens the prefix cache gave
        Token next = -1;                // sampled token to decode at the next step (-1: prefilling)
        std::optional<tokenizer::StreamDecoder> stream;
        std::optional<detail::Generation> generation;
        bool finished = false;
    };

    // ---- worker thread ---------------------------------------------------------------------
    void work();
    /// Takes new submissions, then admits waiting requests while sequences and KV pages last.
    /// Returns false when stopping.
    bool admit();
    /// True when a running request is prefilling whole blocks that `s`'s prompt starts with
    /// (n samples of one prompt, users with one system prompt): `s` waits until they are in the
    /// prefix cache and shares them, instead of computing the same keys and values beside it.
    bool awaits_shared_prefill(const Sequence& s) const;
    /// One forward pass over the decode rows and prompt chunks; then sampling.
    void step();
    /// Reserves the KV pages of [first, last] for `s`, pausing the newest running requests
    /// when the pool is full. False when `s` itself was paused or failed.
    bool reserve(Sequence& s, int first, int last);
    /// Gives a running request's pages back (its blocks stay in the prefix cache) and puts it
    /// at the front of the waiting line, to resume by recomputing its cache.
    void pause(Sequence& s);
    /// After the logits of a sequence's last token: stop, or sample the token to decode next.
    void advance(Sequence& s, std::span<const float> logits);
    void finish(Sequence& s, StopReason reason, Status status, std::string error = {});
    /// Ends a request that never ran (cancelled while queued, or the engine is stopping).
    void cancel_submitted(Submitted& q);
    /// Delivers a result (on_done, then the handle) and forgets the request.
    void deliver(const std::shared_ptr<detail::RequestShared>& shared, Request& request,
                 RequestResult result);
    /// Records the blocks of `s` up to n_past in the prefix cache (full ones, or all).
    void cache_blocks(const Sequence& s, bool partial);
    /// Copies the worker's counts into `stats` (publish_stats_locked: with `mutex` held).
    void publish_stats();
    void publish_stats_locked();

    Model model;
    std::shared_ptr<const detail::ModelImpl> model_impl;
    EngineOptions options;
    int n_ctx = 0, n_threads = 1;

    // Shared with submitting threads, under `mutex`.
    mutable std::mutex mutex;
    std::condition_variable wake;  // the worker: work submitted, or stopping
    std::condition_variable idle;  // wait_idle(): nothing queued or running
    std::deque<Submitted> submitted;
    std::vector<std::shared_ptr<detail::RequestShared>> live;  // not yet delivered
    bool stopping = false;
    std::uint64_t next_id = 1;
    EngineStats stats;

    // Worker only.
    std::atomic<bool> abort{false};  // stops a forward pass midway (destruction)
    std::unique_ptr<model::KvPool> pool;
    std::deque<std::unique_ptr<Sequence>> waiting;
    std::vector<std::unique_ptr<Sequence>> running;
    std::uint64_t admissions = 0;
    std::int64_t preemptions = 0;
    std::int64_t prefix_hits = 0, prefix_hit_tokens = 0;  // admissions that shared cached blocks
    std::int64_t kv_pages_peak = 0;                       // most pages held after a step's reservations
    model::ForwardScratch scratch;
    std::vector<model::BatchRow> rows;
    std::vector<model::KvCache*> row_caches;
    std::thread worker;
};

}  // namespace ember

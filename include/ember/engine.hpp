// ember/engine.hpp: many generation requests on one Model at once (continuous batching).
//
// An Engine serves requests (a prompt in, a continuation out) for many users from one model.
// Its worker thread runs steps; every step is ONE forward pass over the next token of every
// generating request plus chunks of waiting prompts, within a token budget per step
// (EngineOptions::step_tokens), so that a long prompt is prefilled piece by piece and never
// stalls the others' decoding. Requests join and leave between steps. Decoding N sequences in
// one pass reads the weights once instead of N times, so the aggregate speed grows with N.
//
// Each request has its own Sampler, stop strings, token limit, streaming callback and
// cancellation; one request's cancel or error never disturbs the others. Results do not depend
// on the batch: a request's tokens and logits are bit for bit those of a lone Session given the
// same prompt and sampler, whatever else runs beside it and at any thread count.
//
//   ember::Engine engine(model, {.max_sequences = 8});
//   ember::Request request;
//   request.prompt = model.tokenize("Once upon a time");
//   request.sampler = ember::Sampler({.temperature = 0.8f, .seed = 1});
//   request.options.max_tokens = 128;
//   request.options.on_token = [](ember::Token, std::string_view text) {
//       std::cout << text << std::flush; return true; };
//   ember::RequestHandle handle = engine.submit(std::move(request));
//   ember::RequestResult result = handle.wait();
//
// Thread rules:
//  - submit(), cancel_all(), wait_idle() and stats() may be called from any thread at once, and
//    RequestHandle's members likewise (a handle is a cheap, copyable reference to one request).
//  - Callbacks (GenerateOptions::on_token, Request::on_done) run on the engine's worker thread,
//    one at a time, between steps' forward passes: keep them short (they delay every request).
//    They may call submit() and cancel(), but must not wait for a request of the same engine
//    (RequestHandle::wait(), wait_idle(): a deadlock) nor destroy the engine.
//  - An exception thrown by a callback or by the request's Sampler ends that request with
//    StopReason::error (RequestResult::error holds its message); the others go on.
//  - Destroying the Engine cancels the requests still queued or running (StopReason::cancelled,
//    Status::cancelled), delivers their results and joins the worker thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/model.hpp"
#include "ember/sampler.hpp"
#include "ember/session.hpp"
#include "ember/types.hpp"

namespace ember {

/// Options for an Engine.
struct EngineOptions {
    /// Requests generating at once; more wait in a first-come, first-served queue. > 0.
    int max_sequences = 16;
    /// Most tokens one request holds (prompt plus generated; its KV cache). 0: the model's
    /// training context, capped at 4096. A request reaching it stops with context_full.
    int context = 0;
    /// Token budget of one step's forward pass: the decode rows of every generating request
    /// plus chunks of waiting prompts (vLLM's max_num_batched_tokens, llama.cpp's n_batch).
    /// Must be >= max_sequences, so that every generating request decodes at every step.
    int step_tokens = 512;
    /// Worker threads for the forward passes. 0: the model's ModelOptions::threads.
    int threads = 0;
    /// Size of the KV cache pool all requests share, in tokens (each token: keys and values of
    /// every layer). 0: room for every sequence to reach its full context (max_sequences x
    /// context); the memory is reserved at construction and committed by the system as pages
    /// are first used. Requests take pages of kv_block tokens as they grow. When the pool is full the
    /// newest requests are paused and resume later by recomputing their cache (results do not
    /// change); a request the pool cannot hold even alone ends with Status::cache_full.
    std::int64_t kv_cache_tokens = 0;
    /// Tokens per KV page (the unit of allocation and of prefix sharing). 1..4096.
    int kv_block = 16;
    /// How keys and values are stored (Q8_0 needs a head dimension that is a multiple of 32).
    KvType kv_type = KvType::f32;
    /// Keep the KV blocks of finished (and paused) requests for later prompts that start with
    /// the same tokens: such a prompt shares them (copy-on-write where it diverges) and runs only
    /// the rest. Least recently used blocks go first when pages run out.
    bool prefix_cache = true;
};

/// What a request produced: the generated text and tokens as Session::generate reports them
/// (GenerateResult::last_token_pending is always false), with the request's timings.
struct RequestResult : GenerateResult {
    std::uint64_t id = 0;        ///< RequestHandle::id() of the request.
    std::string error;           ///< StopReason::error: what went wrong.
    int prompt_tokens = 0;       ///< Tokens of the prompt.
    int cached_tokens = 0;       ///< Prompt tokens whose keys and values the prefix cache gave.
    double queue_seconds = 0.0;  ///< From submit() until the request's first forward pass.
    double ttft_seconds = 0.0;   ///< From submit() until its first token was sampled (0: none).
    double total_seconds = 0.0;  ///< From submit() until it ended.
};

/// One generation request.
struct Request {
    /// The prompt (at least one token, ids in the vocabulary, at most EngineOptions::context).
    std::vector<Token> prompt;
    /// Picks the tokens (greedy by default). Owned by the request while it runs.
    Sampler sampler;
    /// Token limit, stop strings and the streaming callback, as for Session::generate. on_token
    /// runs on the engine's worker thread; returning false stops the request (cancelled, ok).
    GenerateOptions options;
    /// Called once with the result when the request ends (also when it was cancelled or
    /// failed), on the engine's worker thread, before RequestHandle::wait() returns it.
    std::function<void(const RequestResult&)> on_done;
};

namespace detail {
struct RequestShared;
}

/// A reference to a submitted request. Copyable; every member is thread-safe.
class RequestHandle {
public:
    RequestHandle() = default;
    /// The request's id (1, 2, ... in submission order per engine); 0 for an empty handle.
    std::uint64_t id() const noexcept;
    /// Asks the request to stop: it ends before its next forward pass with
    /// StopReason::cancelled and Status::cancelled. No effect once it has ended.
    void cancel() const noexcept;
    /// Whether the request has ended (its result is ready).
    bool done() const noexcept;
    /// Blocks until the request ends and returns its result (a copy; callable many times).
    /// Throws ember::Error for an empty handle.
    RequestResult wait() const;

private:
    friend class Engine;
    explicit RequestHandle(std::shared_ptr<detail::RequestShared> shared) : shared_(std::move(shared)) {}
    std::shared_ptr<detail::RequestShared> shared_;
};

/// Counters of an engine since it was created.
struct EngineStats {
    std::int64_t steps = 0;             ///< Forward passes run.
    std::int64_t decoded_tokens = 0;    ///< Decode rows run (one per generated token fed back).
    std::int64_t prefilled_tokens = 0;  ///< Prompt tokens run.
    std::int64_t requests_done = 0;     ///< Requests that ended (any reason).
    int running = 0;                    ///< Requests holding a sequence now.
    int queued = 0;                     ///< Requests waiting for a sequence (or paused).
    double busy_seconds = 0.0;          ///< Wall time inside steps.
    std::int64_t prefix_hits = 0;       ///< Admissions that shared cached prefix blocks.
    std::int64_t prefix_hit_tokens = 0; ///< Tokens those admissions did not have to run.
    std::int64_t preemptions = 0;       ///< Requests paused for want of KV pages.
    std::int64_t kv_pages = 0;          ///< Pages in the pool (one layer x kv_block tokens each).
    std::int64_t kv_pages_free = 0;     ///< Pages neither a request nor the prefix cache holds.
    std::int64_t kv_pages_peak = 0;     ///< Most pages held at once (requests and prefix cache).
    std::int64_t kv_bytes = 0;          ///< Bytes of the pool.
};

class Engine {
public:
    /// Starts the worker thread. Throws ember::Error for invalid options.
    explicit Engine(const Model& model, EngineOptions options = {});
    /// Cancels the requests still queued or running and joins the worker (see the thread rules).
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    /// Queues a request. Throws ember::Error, and queues nothing, for an empty prompt, an id
    /// outside the vocabulary or a prompt longer than EngineOptions::context.
    RequestHandle submit(Request request);
    /// Cancels every request queued or running now.
    void cancel_all();
    /// Blocks until no request is queued or running.
    void wait_idle();
    EngineStats stats() const;

    const Model& model() const noexcept;
    const EngineOptions& options() const noexcept;
    /// The context (tokens per request) in effect.
    int context() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember

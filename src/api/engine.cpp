// ember::Engine: continuous batching. Submitting threads queue requests; the worker thread
// admits them into free sequences between steps and runs one forward pass per step over every
// generating sequence's next token plus chunks of waiting prompts (within step_tokens), then
// samples each sequence whose logits came out, through the same detail::Generation as
// Session::generate.
#include "ember/engine.hpp"

#include <algorithm>
#include <exception>

#include "api/engine_impl.hpp"
#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"

namespace ember {
namespace {

double seconds_between(EngineClock::time_point a, EngineClock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

}  // namespace

// ---- RequestHandle ----------------------------------------------------------------------------

std::uint64_t RequestHandle::id() const noexcept { return shared_ ? shared_->id : 0; }

void RequestHandle::cancel() const noexcept {
    if (shared_) shared_->cancel.store(true, std::memory_order_relaxed);
}

bool RequestHandle::done() const noexcept {
    if (!shared_) return false;
    std::lock_guard lock(shared_->mutex);
    return shared_->done;
}

RequestResult RequestHandle::wait() const {
    if (!shared_) fail("RequestHandle::wait: the handle refers to no request");
    std::unique_lock lock(shared_->mutex);
    shared_->ready.wait(lock, [&] { return shared_->done; });
    return shared_->result;
}

// ---- Engine -----------------------------------------------------------------------------------

Engine::Impl::Impl(const Model& m, EngineOptions o) : model(m), model_impl(detail::ModelAccess::impl(m)), options(o) {
    const auto& c = model_impl->config;
    if (o.max_sequences <= 0) fail("EngineOptions::max_sequences must be > 0, got " + std::to_string(o.max_sequences));
    if (o.context < 0) fail("EngineOptions::context must be >= 0, got " + std::to_string(o.context));
    if (o.threads < 0) fail("EngineOptions::threads must be >= 0, got " + std::to_string(o.threads));
    if (o.step_tokens < o.max_sequences) {
        fail("EngineOptions::step_tokens (" + std::to_string(o.step_tokens) +
             ") must be >= max_sequences (" + std::to_string(o.max_sequences) +
             "): every generating request decodes at every step");
    }
    n_ctx = o.context > 0 ? o.context : static_cast<int>(std::min<std::int64_t>(c.n_ctx_train, 4096));
    n_threads = resolve_threads(o.threads > 0 ? o.threads : model_impl->options.threads);
    scratch = model::ForwardScratch(c, model_impl->weights, o.step_tokens, n_ctx, o.max_sequences, n_threads);
    rows.reserve(static_cast<std::size_t>(o.step_tokens));
    caches.resize(static_cast<std::size_t>(o.max_sequences));
    for (int i = o.max_sequences - 1; i >= 0; --i) free_caches.push_back(i);
    for (auto& cache : caches) row_caches.push_back(&cache);
}

Engine::Engine(const Model& model, EngineOptions options)
    : impl_(std::make_unique<Impl>(model, options)) {
    impl_->worker = std::thread([this] { impl_->work(); });
}

Engine::~Engine() {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
    }
    impl_->abort.store(true);
    impl_->wake.notify_all();
    impl_->worker.join();
}

RequestHandle Engine::submit(Request request) {
    Impl& e = *impl_;
    const auto& c = e.model_impl->config;
    if (request.prompt.empty()) fail("Engine::submit: the prompt is empty");
    if (request.prompt.size() > static_cast<std::size_t>(e.n_ctx)) {
        fail("Engine::submit: prompt of " + std::to_string(request.prompt.size()) +
             " tokens does not fit in the context of " + std::to_string(e.n_ctx));
    }
    for (std::size_t i = 0; i < request.prompt.size(); ++i) {
        const Token t = request.prompt[i];
        if (t < 0 || t >= c.n_vocab) {
            fail("Engine::submit: prompt token " + std::to_string(i) + " has id " + std::to_string(t) +
                 ", outside the vocabulary [0, " + std::to_string(c.n_vocab) + ")");
        }
    }
    auto shared = std::make_shared<detail::RequestShared>();
    {
        std::lock_guard lock(e.mutex);
        if (e.stopping) fail("Engine::submit: the engine is shutting down");
        shared->id = e.next_id++;
        e.live.push_back(shared);
        e.queue.push_back({shared, std::move(request), EngineClock::now()});
        e.stats.queued = static_cast<int>(e.queue.size());
    }
    e.wake.notify_one();
    return RequestHandle(std::move(shared));
}

void Engine::cancel_all() {
    std::lock_guard lock(impl_->mutex);
    for (const auto& r : impl_->live) r->cancel.store(true, std::memory_order_relaxed);
}

void Engine::wait_idle() {
    std::unique_lock lock(impl_->mutex);
    impl_->idle.wait(lock, [&] { return impl_->live.empty(); });
}

EngineStats Engine::stats() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->stats;
}

const Model& Engine::model() const noexcept { return impl_->model; }
const EngineOptions& Engine::options() const noexcept { return impl_->options; }
int Engine::context() const noexcept { return impl_->n_ctx; }

// ---- the worker -------------------------------------------------------------------------------

void Engine::Impl::work() {
    for (;;) {
        {
            std::unique_lock lock(mutex);
            if (running.empty()) wake.wait(lock, [&] { return stopping || !queue.empty(); });
            if (!admit(lock)) break;
        }
        if (!running.empty()) step();
    }
    // Stopping: everything still queued or running ends as cancelled.
    for (auto& r : running) {
        if (!r->finished) finish(*r, StopReason::cancelled, Status::cancelled);
    }
    running.clear();
    std::deque<Queued> left;
    {
        std::lock_guard lock(mutex);
        left.swap(queue);
    }
    for (Queued& q : left) cancel_queued(q);
}

bool Engine::Impl::admit(std::unique_lock<std::mutex>& lock) {
    if (stopping) return false;
    std::vector<Queued> cancelled;
    while (!queue.empty() && (!free_caches.empty() || queue.front().shared->cancel.load())) {
        Queued q = std::move(queue.front());
        queue.pop_front();
        if (q.shared->cancel.load()) {
            cancelled.push_back(std::move(q));
            continue;
        }
        auto r = std::make_unique<Running>();
        r->shared = std::move(q.shared);
        r->request = std::move(q.request);
        r->submitted = q.submitted;
        r->started = EngineClock::now();
        r->cache = free_caches.back();
        free_caches.pop_back();
        caches[static_cast<std::size_t>(r->cache)].clear();  // a previous request's positions
        r->tokens = r->request.prompt;
        r->tokens.reserve(static_cast<std::size_t>(n_ctx));
        r->n_prompt = static_cast<int>(r->tokens.size());
        r->stream.emplace(*model_impl->tokenizer, /*strip_leading_space=*/false);
        r->generation.emplace(r->request.options, *model_impl->tokenizer, *r->stream);
        running.push_back(std::move(r));
    }
    stats.queued = static_cast<int>(queue.size());
    stats.running = static_cast<int>(running.size());
    if (!cancelled.empty()) {
        lock.unlock();
        for (Queued& q : cancelled) cancel_queued(q);
        lock.lock();
    }
    return true;
}

void Engine::Impl::step() {
    const auto t0 = EngineClock::now();
    // Cancelled requests leave before the pass.
    for (auto& r : running) {
        if (r->shared->cancel.load(std::memory_order_relaxed)) finish(*r, StopReason::cancelled, Status::cancelled);
    }
    // Decode rows first (every generating sequence, one token each), then prompt chunks in
    // arrival order while the budget lasts.
    rows.clear();
    struct Part {
        Running* r;
        int n;          // rows of this sequence in the pass
        bool logits;    // its last row computes logits
    };
    std::vector<Part> parts;
    parts.reserve(running.size());
    for (auto& r : running) {
        if (r->finished || r->next < 0) continue;
        rows.push_back({r->next, r->n_past, r->cache, true});
        parts.push_back({r.get(), 1, true});
    }
    auto budget = static_cast<std::int64_t>(options.step_tokens) - static_cast<std::int64_t>(rows.size());
    for (auto& r : running) {
        if (budget <= 0) break;
        if (r->finished || r->next >= 0) continue;
        const int n = static_cast<int>(std::min<std::int64_t>(budget, r->n_prompt - r->n_past));
        for (int i = 0; i < n; ++i) {
            const int pos = r->n_past + i;
            rows.push_back({r->tokens[static_cast<std::size_t>(pos)], pos, r->cache, false});
        }
        const bool last = r->n_past + n == r->n_prompt;
        rows.back().logits = last;
        parts.push_back({r.get(), n, last});
        budget -= n;
    }
    if (!rows.empty()) {
        for (const Part& p : parts) {
            auto& cache = caches[static_cast<std::size_t>(p.r->cache)];
            if (cache.n_ctx() == 0) cache = model::KvCache(model_impl->config, n_ctx, options.step_tokens);
        }
        const std::function<bool()> cancel = [this] { return abort.load(std::memory_order_relaxed); };
        if (!model_impl->forward.run(rows, row_caches, scratch, n_threads, cancel)) return;  // stopping

        std::int64_t logit_row = 0, decoded = 0, prefilled = 0;
        for (const Part& p : parts) {
            Running& r = *p.r;
            if (r.next >= 0) {
                r.tokens.push_back(r.next);
                r.next = -1;
                decoded += 1;
            } else {
                prefilled += p.n;
            }
            r.n_past += p.n;
            if (p.logits) advance(r, scratch.logits(logit_row++));
        }
        std::lock_guard lock(mutex);
        stats.steps += 1;
        stats.decoded_tokens += decoded;
        stats.prefilled_tokens += prefilled;
    }
    // Finished sequences give back their caches.
    std::erase_if(running, [&](const std::unique_ptr<Running>& r) {
        if (r->finished) free_caches.push_back(r->cache);
        return r->finished;
    });
    std::lock_guard lock(mutex);
    stats.running = static_cast<int>(running.size());
    stats.busy_seconds += seconds_between(t0, EngineClock::now());
}

void Engine::Impl::advance(Running& r, std::span<const float> logits) {
    detail::Generation& gen = *r.generation;
    if (gen.at_limit()) return finish(r, StopReason::max_tokens, Status::ok);
    if (r.n_past >= n_ctx) return finish(r, StopReason::context_full, Status::context_full);
    if (r.shared->cancel.load(std::memory_order_relaxed)) return finish(r, StopReason::cancelled, Status::cancelled);
    detail::Generation::Step s;
    try {
        s = gen.next(r.request.sampler, logits);
    } catch (const std::exception& ex) {
        return finish(r, StopReason::error, Status::ok, ex.what());
    } catch (...) {
        return finish(r, StopReason::error, Status::ok, "unknown exception");
    }
    if (s.eog) return finish(r, StopReason::eog, Status::ok);
    if (gen.result().tokens.size() == 1) r.first_token = EngineClock::now();
    if (s.stop_found) return finish(r, StopReason::stop_string, Status::ok);
    if (!s.go_on) return finish(r, StopReason::cancelled, Status::ok);
    r.next = s.token;
}

void Engine::Impl::finish(Running& r, StopReason reason, Status status, std::string error) {
    r.finished = true;
    RequestResult result;
    try {
        static_cast<GenerateResult&>(result) = r.generation->finish(reason, status);
    } catch (const std::exception& ex) {  // on_token releasing the held-back text threw
        static_cast<GenerateResult&>(result) = std::move(r.generation->result());
        result.stop_reason = StopReason::error;
        result.status = Status::ok;
        error = ex.what();
    } catch (...) {
        static_cast<GenerateResult&>(result) = std::move(r.generation->result());
        result.stop_reason = StopReason::error;
        result.status = Status::ok;
        error = "unknown exception";
    }
    result.error = std::move(error);
    result.prompt_tokens = r.n_prompt;
    const auto now = EngineClock::now();
    result.queue_seconds = seconds_between(r.submitted, r.started);
    if (!result.tokens.empty()) result.ttft_seconds = seconds_between(r.submitted, r.first_token);
    result.total_seconds = seconds_between(r.submitted, now);
    deliver(r.shared, r.request, std::move(result));
}

void Engine::Impl::cancel_queued(Queued& q) {
    RequestResult result;
    result.stop_reason = StopReason::cancelled;
    result.status = Status::cancelled;
    result.prompt_tokens = static_cast<int>(q.request.prompt.size());
    result.total_seconds = seconds_between(q.submitted, EngineClock::now());
    deliver(q.shared, q.request, std::move(result));
}

void Engine::Impl::deliver(const std::shared_ptr<detail::RequestShared>& shared, Request& request,
                           RequestResult result) {
    result.id = shared->id;
    if (request.on_done) {
        try {
            request.on_done(result);
        } catch (...) {  // documented: ignored (the result is already final)
        }
    }
    // Under both locks (always the engine's first), so that whoever sees the request done also
    // sees it counted in stats() and gone from wait_idle()'s view.
    bool now_idle = false;
    {
        std::lock_guard lock(mutex);
        std::lock_guard request_lock(shared->mutex);
        shared->result = std::move(result);
        shared->done = true;
        std::erase(live, shared);
        stats.requests_done += 1;
        now_idle = live.empty();
    }
    shared->ready.notify_all();
    if (now_idle) idle.notify_all();
}

}  // namespace ember

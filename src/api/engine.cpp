// ember::Engine: continuous batching over a paged KV cache with a prefix cache.
//
// Submitting threads queue requests; the worker thread takes them into its waiting line and
// admits them, oldest first, while sequences and KV pages last, sharing the KV blocks of the
// longest cached prefix of their prompt. Every step runs one forward pass over every generating
// sequence's next token plus chunks of waiting prompts (within step_tokens), then samples each
// sequence whose logits came out, through the same detail::Generation as Session::generate.
// When the pool runs out of pages, the newest running requests are paused (their blocks stay
// in the prefix cache) and later resume by recomputing their cache: batch invariance makes the
// recomputed keys and values, and so every result, bit-identical.
#include "ember/engine.hpp"

#include <algorithm>
#include <exception>
#include <new>

#include "api/engine_impl.hpp"
#include "model/kv_type.hpp"
#include "runtime/fail.hpp"
#include "runtime/memory.hpp"
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
    if (o.kv_block <= 0 || o.kv_block > 4096) {
        fail("EngineOptions::kv_block must be in [1, 4096], got " + std::to_string(o.kv_block));
    }
    if (o.kv_cache_tokens < 0) fail("EngineOptions::kv_cache_tokens must be >= 0, got " + std::to_string(o.kv_cache_tokens));
    n_ctx = o.context > 0 ? o.context : static_cast<int>(std::min<std::int64_t>(c.n_ctx_train, 4096));
    n_threads = resolve_threads(o.threads > 0 ? o.threads : model_impl->options.threads);
    // The pool: every layer's pages for kv_cache_tokens positions (default: every sequence at
    // its full context), rounded up to whole blocks.
    const std::int64_t tokens = o.kv_cache_tokens > 0 ? o.kv_cache_tokens
                                                      : std::int64_t{o.max_sequences} * n_ctx;
    const std::int64_t blocks = (tokens + o.kv_block - 1) / o.kv_block;
    if (blocks > (std::int64_t{1} << 30) / std::max<std::int64_t>(c.n_layer, 1)) {
        fail("EngineOptions::kv_cache_tokens of " + std::to_string(tokens) + " is too large");
    }
    model::KvPoolOptions po;
    po.block = o.kv_block;
    po.pages = blocks * c.n_layer;
    po.type = o.kv_type;
    po.prefix_cache = o.prefix_cache;
    try {
        // Pages are memory the system commits as they are first written: a pool sized for every
        // sequence's full context costs what the requests use.
        pool = std::make_unique<model::KvPool>(c, po);
    } catch (const std::bad_alloc&) {
        fail("the KV cache pool of " + std::to_string(blocks * o.kv_block) + " tokens (" +
             format_bytes(2 * model::kv_row_bytes(o.kv_type, c.n_embd_kv(), c.head_dim) *
                          static_cast<std::uint64_t>(blocks * o.kv_block) * static_cast<std::uint64_t>(c.n_layer)) +
             "): out of memory; set EngineOptions::kv_cache_tokens");
    }
    scratch = model::ForwardScratch(c, model_impl->weights, o.step_tokens, n_ctx, o.max_sequences, n_threads);
    rows.reserve(static_cast<std::size_t>(o.step_tokens));
    row_caches.reserve(static_cast<std::size_t>(o.step_tokens));
}

Engine::Engine(const Model& model, EngineOptions options)
    : impl_(std::make_unique<Impl>(model, options)) {
    impl_->publish_stats();
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
        e.submitted.push_back({shared, std::move(request), EngineClock::now()});
        e.stats.queued += 1;
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
        if (running.empty() && waiting.empty()) {
            std::unique_lock lock(mutex);
            wake.wait(lock, [&] { return stopping || !submitted.empty(); });
        }
        if (!admit()) break;
        if (!running.empty()) step();
    }
    // Stopping: everything still submitted, waiting or running ends as cancelled.
    for (auto& s : running) finish(*s, StopReason::cancelled, Status::cancelled);
    running.clear();
    for (auto& s : waiting) finish(*s, StopReason::cancelled, Status::cancelled);
    waiting.clear();
    std::deque<Submitted> left;
    {
        std::lock_guard lock(mutex);
        left.swap(submitted);
    }
    for (Submitted& q : left) cancel_submitted(q);
}

bool Engine::Impl::admit() {
    std::deque<Submitted> fresh;
    {
        std::lock_guard lock(mutex);
        if (stopping) return false;
        fresh.swap(submitted);
    }
    for (Submitted& q : fresh) {
        auto s = std::make_unique<Sequence>();
        s->shared = std::move(q.shared);
        s->request = std::move(q.request);
        s->submitted = q.submitted;
        s->tokens = s->request.prompt;
        s->tokens.reserve(static_cast<std::size_t>(n_ctx));
        s->n_prompt = s->n_target = static_cast<int>(s->tokens.size());
        s->stream.emplace(*model_impl->tokenizer, /*strip_leading_space=*/false);
        s->generation.emplace(s->request.options, *model_impl->tokenizer, *s->stream);
        waiting.push_back(std::move(s));
    }
    // Cancelled requests leave the line wherever they are.
    for (auto& s : waiting) {
        if (s->shared->cancel.load(std::memory_order_relaxed)) finish(*s, StopReason::cancelled, Status::cancelled);
    }
    std::erase_if(waiting, [](const std::unique_ptr<Sequence>& s) { return s->finished; });
    // Oldest first while sequences and pages last; the first one always, when nothing runs.
    // A request whose prompt starts with blocks another one is prefilling now lets the others
    // pass and waits for those blocks (awaits_shared_prefill).
    for (std::size_t next = 0; running.size() < static_cast<std::size_t>(options.max_sequences) && next < waiting.size();) {
        Sequence& s = *waiting[next];
        if (awaits_shared_prefill(s)) {
            ++next;
            continue;
        }
        s.cache = model::KvCache(*pool, n_ctx);
        const std::span<const Token> target(s.tokens.data(), static_cast<std::size_t>(s.n_target));
        const auto matched = static_cast<int>(pool->match(target, s.n_target - 1, s.cache));
        // Room for its prompt, and a block per layer for each running request to grow into
        // (else admitting it would only get it paused at the next block boundary).
        const std::int64_t headroom = static_cast<std::int64_t>(running.size()) * model_impl->config.n_layer;
        if (!running.empty() && s.cache.pages_needed(matched, s.n_target - 1) + headroom > pool->available_pages()) {
            s.cache.clear();
            break;
        }
        s.n_past = matched;
        if (matched > 0) {
            prefix_hits += 1;
            prefix_hit_tokens += matched;
        }
        if (!s.started_once) {
            s.started_once = true;
            s.started = EngineClock::now();
            s.cached_tokens = matched;
        }
        s.admitted = ++admissions;
        running.push_back(std::move(waiting[next]));
        waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(next));
    }
    publish_stats();
    return true;
}

bool Engine::Impl::awaits_shared_prefill(const Sequence& s) const {
    if (!pool->prefix_cache()) return false;
    const auto block = static_cast<std::size_t>(options.kv_block);
    for (const auto& r : running) {
        if (r->next >= 0 || r->n_past >= r->n_target) continue;  // not prefilling
        // Like KvPool::match, s shares at most n_target - 1 tokens (its last one gives logits).
        const auto limit = static_cast<std::size_t>(std::min(s.n_target - 1, r->n_target));
        const auto end = s.tokens.begin() + static_cast<std::ptrdiff_t>(limit);
        const auto common = static_cast<std::size_t>(std::mismatch(s.tokens.begin(), end, r->tokens.begin()).first -
                                                     s.tokens.begin());
        const std::size_t shareable = common / block * block;  // whole blocks reach the cache
        if (shareable > 0 && static_cast<std::size_t>(r->n_past) < shareable) return true;
    }
    return false;
}

void Engine::Impl::step() {
    const auto t0 = EngineClock::now();
    for (auto& s : running) {
        if (s->shared->cancel.load(std::memory_order_relaxed)) finish(*s, StopReason::cancelled, Status::cancelled);
    }
    std::erase_if(running, [](const std::unique_ptr<Sequence>& s) { return s->finished; });

    // Decode rows first (every generating sequence, one token each), then prompt chunks, oldest
    // first, while the budget lasts.
    struct Part {
        Sequence* s;
        int first, n;   // positions [first, first + n)
        bool logits;    // its last row computes logits
    };
    std::vector<Part> parts;
    parts.reserve(running.size());
    for (auto& s : running) {
        if (s->next >= 0) parts.push_back({s.get(), s->n_past, 1, true});
    }
    auto budget = static_cast<std::int64_t>(options.step_tokens) - static_cast<std::int64_t>(parts.size());
    for (auto& s : running) {
        if (budget <= 0) break;
        if (s->next >= 0 || s->n_past >= s->n_target) continue;
        const int n = static_cast<int>(std::min<std::int64_t>(budget, s->n_target - s->n_past));
        parts.push_back({s.get(), s->n_past, n, s->n_past + n == s->n_target});
        budget -= n;
    }
    // Pages for every part; a full pool pauses the newest requests (maybe one planned here).
    for (const Part& p : parts) {
        if (p.s->admitted != 0) reserve(*p.s, p.first, p.first + p.n - 1);
    }
    kv_pages_peak = std::max(kv_pages_peak, pool->n_pages() - pool->free_pages());
    rows.clear();
    row_caches.clear();
    for (const Part& p : parts) {
        if (p.s->admitted == 0 || p.s->finished) continue;  // paused or failed meanwhile
        const auto seq = static_cast<std::int32_t>(row_caches.size());
        row_caches.push_back(&p.s->cache);
        for (int i = 0; i < p.n; ++i) {
            const int pos = p.first + i;
            const Token t = p.s->next >= 0 ? p.s->next : p.s->tokens[static_cast<std::size_t>(pos)];
            rows.push_back({t, pos, seq, p.logits && i == p.n - 1});
        }
    }
    if (!rows.empty()) {
        const std::function<bool()> cancel = [this] { return abort.load(std::memory_order_relaxed); };
        if (!model_impl->forward.run(rows, row_caches, scratch, n_threads, cancel)) return;  // stopping

        std::int64_t logit_row = 0, decoded = 0, prefilled = 0;
        for (const Part& p : parts) {
            Sequence& s = *p.s;
            if (s.admitted == 0 || s.finished) continue;
            if (s.next >= 0) {
                s.tokens.push_back(s.next);
                s.next = -1;
                decoded += 1;
            } else {
                prefilled += p.n;
            }
            const int before = s.n_past;
            s.n_past += p.n;
            if (pool->prefix_cache() && s.n_past / options.kv_block > before / options.kv_block) cache_blocks(s, false);
            if (p.logits) advance(s, scratch.logits(logit_row++));
        }
        std::lock_guard lock(mutex);
        stats.steps += 1;
        stats.decoded_tokens += decoded;
        stats.prefilled_tokens += prefilled;
    }
    std::erase_if(running, [](const std::unique_ptr<Sequence>& s) { return s->finished; });
    {
        std::lock_guard lock(mutex);
        stats.busy_seconds += seconds_between(t0, EngineClock::now());
    }
    publish_stats();
}

bool Engine::Impl::reserve(Sequence& s, int first, int last) {
    for (;;) {
        if (s.cache.reserve(first, last)) return true;
        // The pool is full even without the cached prefixes nobody uses: pause the newest.
        Sequence* newest = nullptr;
        for (auto& r : running) {
            if (r->admitted != 0 && !r->finished && (newest == nullptr || r->admitted > newest->admitted)) newest = r.get();
        }
        std::size_t n_running = 0;
        for (auto& r : running) n_running += (r->admitted != 0 && !r->finished) ? 1 : 0;
        if (newest == &s && n_running == 1) {
            finish(s, StopReason::context_full, Status::cache_full);
            return false;
        }
        pause(*newest);
        if (newest == &s) return false;
    }
}

void Engine::Impl::pause(Sequence& s) {
    cache_blocks(s, true);
    s.cache.clear();
    if (s.next >= 0) {  // resume by running it with the rest, its logits then come out last
        s.tokens.push_back(s.next);
        s.next = -1;
    }
    s.n_target = static_cast<int>(s.tokens.size());
    s.n_past = 0;
    s.admitted = 0;
    preemptions += 1;
    const auto it = std::find_if(running.begin(), running.end(), [&](const auto& r) { return r.get() == &s; });
    waiting.push_front(std::move(*it));
    running.erase(it);  // step()'s parts still point at it: admitted == 0 tells them it left
}

void Engine::Impl::cache_blocks(const Sequence& s, bool partial) {
    if (!pool->prefix_cache() || !s.cache.valid() || s.n_past == 0) return;
    pool->insert(std::span<const Token>(s.tokens.data(), static_cast<std::size_t>(s.n_past)), s.n_past, s.cache, partial);
}

void Engine::Impl::advance(Sequence& s, std::span<const float> logits) {
    detail::Generation& gen = *s.generation;
    if (gen.at_limit()) return finish(s, StopReason::max_tokens, Status::ok);
    if (s.n_past >= n_ctx) return finish(s, StopReason::context_full, Status::context_full);
    if (s.shared->cancel.load(std::memory_order_relaxed)) return finish(s, StopReason::cancelled, Status::cancelled);
    detail::Generation::Step step;
    try {
        step = gen.next(s.request.sampler, logits);
    } catch (const std::exception& ex) {
        return finish(s, StopReason::error, Status::ok, ex.what());
    } catch (...) {
        return finish(s, StopReason::error, Status::ok, "unknown exception");
    }
    if (step.eog) return finish(s, StopReason::eog, Status::ok);
    if (gen.result().tokens.size() == 1) s.first_token = EngineClock::now();
    if (step.stop_found) return finish(s, StopReason::stop_string, Status::ok);
    if (!step.go_on) return finish(s, StopReason::cancelled, Status::ok);
    s.next = step.token;
}

void Engine::Impl::finish(Sequence& s, StopReason reason, Status status, std::string error) {
    s.finished = true;
    cache_blocks(s, true);
    s.cache.clear();
    RequestResult result;
    try {
        static_cast<GenerateResult&>(result) = s.generation->finish(reason, status);
    } catch (const std::exception& ex) {  // on_token releasing the held-back text threw
        static_cast<GenerateResult&>(result) = std::move(s.generation->result());
        result.stop_reason = StopReason::error;
        result.status = Status::ok;
        error = ex.what();
    } catch (...) {
        static_cast<GenerateResult&>(result) = std::move(s.generation->result());
        result.stop_reason = StopReason::error;
        result.status = Status::ok;
        error = "unknown exception";
    }
    result.error = std::move(error);
    result.prompt_tokens = s.n_prompt;
    result.cached_tokens = s.cached_tokens;
    const auto now = EngineClock::now();
    if (s.started_once) result.queue_seconds = seconds_between(s.submitted, s.started);
    if (!result.tokens.empty()) result.ttft_seconds = seconds_between(s.submitted, s.first_token);
    result.total_seconds = seconds_between(s.submitted, now);
    deliver(s.shared, s.request, std::move(result));
}

void Engine::Impl::cancel_submitted(Submitted& q) {
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
        publish_stats_locked();  // whoever sees it done sees its pages back in stats()
        now_idle = live.empty();
    }
    shared->ready.notify_all();
    if (now_idle) idle.notify_all();
}

void Engine::Impl::publish_stats() {
    std::lock_guard lock(mutex);
    publish_stats_locked();
}

void Engine::Impl::publish_stats_locked() {
    const auto live_count = [](const auto& seqs) {
        return static_cast<int>(std::count_if(seqs.begin(), seqs.end(), [](const auto& s) { return !s->finished; }));
    };
    stats.running = live_count(running);
    stats.queued = live_count(waiting) + static_cast<int>(submitted.size());
    stats.prefix_hits = prefix_hits;
    stats.prefix_hit_tokens = prefix_hit_tokens;
    stats.preemptions = preemptions;
    stats.kv_pages = pool->n_pages();
    stats.kv_pages_free = pool->free_pages();
    stats.kv_pages_peak = kv_pages_peak;
    stats.kv_bytes = static_cast<std::int64_t>(pool->bytes());
}

}  // namespace ember

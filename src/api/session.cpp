#include "ember/session.hpp"

#include <algorithm>
#include <new>
#include <string>

#include "api/session_impl.hpp"
#include "kernels/attention.hpp"
#include "model/context_shift.hpp"
#include "runtime/fail.hpp"
#include "runtime/memory.hpp"
#include "runtime/parallel.hpp"

namespace ember {
namespace {

struct SessionBytes {
    std::uint64_t kv = 0, total = 0;
};

// What a session allocates: the KV cache, the forward pass's scratch (model/decoder.cpp) and
// the token and logit buffers. Saturating arithmetic: the options are not trusted yet.
SessionBytes session_bytes(const model::ModelConfig& c, int n_ctx, int n_batch, std::int64_t n_pinned,
                           KvType kv_type, int n_logit_rows, int n_threads) {
    const auto u = size_or_zero;
    const std::uint64_t f = sizeof(float), ctx = u(n_ctx), batch = u(n_batch);
    SessionBytes b;
    b.kv = model::KvCache::bytes_needed(c, n_ctx, n_batch, n_pinned, kv_type);
    const std::uint64_t wide = u(std::max(c.n_embd, c.n_embd_q()));
    const std::uint64_t per_row = u(c.n_embd) + 2 * wide + 2 * u(c.n_embd_kv()) + 2 * u(c.n_ff) + 2 * u(c.n_rot());
    const std::uint64_t scores =
        saturating_mul(u(n_threads) * u(c.n_head / std::max<std::int64_t>(c.n_head_kv, 1)), ctx);
    const std::uint64_t quantized = saturating_mul(batch, 2 * u(std::max(c.n_embd, c.n_ff)));  // int8 + scales
    std::uint64_t floats = saturating_mul(batch, per_row);
    floats = saturating_add(floats, scores);
    floats = saturating_add(floats, saturating_mul(u(n_threads), (ctx + 1) * (sizeof(kernels::KvRun) / f)));  // KV runs
    floats = saturating_add(floats, saturating_mul(u(n_logit_rows), u(c.n_embd) + u(c.n_vocab)));
    floats = saturating_add(floats, ctx + u(c.n_vocab));  // tokens, logits
    b.total = saturating_add(b.kv, saturating_add(saturating_mul(floats, f), quantized));
    return b;
}

}  // namespace

Session::Impl::Impl(const Model& m, SessionOptions o) : model(m), model_impl(detail::ModelAccess::impl(m)), options(o) {
    const auto& c = model_impl->config;
    if (o.context < 0) fail("SessionOptions::context must be >= 0, got " + std::to_string(o.context));
    if (o.threads < 0) fail("SessionOptions::threads must be >= 0, got " + std::to_string(o.threads));
    if (o.batch <= 0) fail("SessionOptions::batch must be > 0, got " + std::to_string(o.batch));
    n_ctx = o.context > 0 ? o.context : static_cast<int>(std::min<std::int64_t>(c.n_ctx_train, 4096));
    if (o.n_keep < 0 || o.n_keep >= n_ctx) {
        fail("SessionOptions::n_keep must be in [0, " + std::to_string(n_ctx) + "), got " +
             std::to_string(o.n_keep));
    }
    n_threads = resolve_threads(o.threads > 0 ? o.threads : model_impl->options.threads);
    check_threads(n_threads, "SessionOptions::threads");
    n_batch = std::min(o.batch, n_ctx);
    // Everything below is sized from the options: check that it fits before allocating.
    const int n_logit_rows = o.logits_all ? n_batch : 1;
    const std::int64_t n_pinned = o.context_shift ? o.n_keep : 0;
    const SessionBytes need = session_bytes(c, n_ctx, n_batch, n_pinned, o.kv_type, n_logit_rows, n_threads);
    const std::string what = "a session of context " + std::to_string(n_ctx) + " and batch " +
                             std::to_string(n_batch) + " (KV cache " + format_bytes(need.kv) + ")";
    check_memory(need.total, what);
    try {
        cache = model::KvCache(c, n_ctx, n_batch, n_pinned, o.kv_type);
        scratch = model::ForwardScratch(c, model_impl->weights, n_batch, n_ctx, n_logit_rows, n_threads);
        rows.resize(static_cast<std::size_t>(n_batch));
        tokens.reserve(static_cast<std::size_t>(n_ctx));
        logits.resize(static_cast<std::size_t>(c.n_vocab));
        rope_scratch.resize(static_cast<std::size_t>(2 * c.n_rot() + c.n_embd_kv()));
    } catch (const std::bad_alloc&) {
        fail(what + " needs about " + format_bytes(need.total) + ": out of memory");
    }
    // Streamed text continues the prompt, so a leading space is kept (unlike decode()).
    stream.emplace(*model_impl->tokenizer, /*strip_leading_space=*/false);
}

void Session::Impl::check_ids(std::span<const Token> ids, const char* what) const {
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (!valid_token(ids[i])) {
            fail(what + std::to_string(i) + " has id " + std::to_string(ids[i]) + ", outside the vocabulary [0, " +
                 std::to_string(model_impl->config.n_vocab) + ")");
        }
    }
}

bool Session::Impl::can_shift() const noexcept {
    return options.context_shift && model::context_shift_discard(n_past, options.n_keep) > 0;
}

void Session::Impl::shift() {
    const std::int64_t n_discard = model::context_shift_discard(n_past, options.n_keep);
    EMBER_ASSERT(options.context_shift && n_discard > 0);
    const auto& m = *model_impl;
    cache.truncate(n_past);  // a cancelled chunk may have reserved positions past n_past
    model::shift_context(cache, m.config, m.weights.rope_factors(n_ctx, m.config), n_past,
                         options.n_keep, n_discard, rope_scratch);
    const auto first = tokens.begin() + options.n_keep;
    tokens.erase(first, first + n_discard);
    n_past -= static_cast<int>(n_discard);
    // logits() still predict the token after the last one: the shift keeps the last tokens.
    n_logit_rows = 0;  // logits_at() rows belong to positions that moved
    rows_kept = false;
    metrics.context_shifts += 1;
}

Status Session::Impl::run_rows(const Token* chunk, int n, bool all_logits) {
    for (int i = 0; i < n; ++i) {
        rows[static_cast<std::size_t>(i)] = {chunk[i], n_past + i, 0, all_logits || i == n - 1};
    }
    if (all_logits) scratch.reserve_logit_rows(model_impl->config, model_impl->weights, n);
    model::KvCache* caches[] = {&cache};
    if (!model_impl->forward.run(std::span(rows.data(), static_cast<std::size_t>(n)), caches, scratch,
                                 n_threads, cancel)) {
        return Status::cancelled;  // the cache holds ignorable entries past n_past
    }
    tokens.insert(tokens.end(), chunk, chunk + n);
    n_logit_rows = all_logits ? n : 1;
    logit_rows_pos = n_past + n - n_logit_rows;
    rows_kept = all_logits;
    n_past += n;
    const auto last = scratch.logits(n_logit_rows - 1);
    std::copy(last.begin(), last.end(), logits.begin());
    has_logits = true;
    return Status::ok;
}

std::span<const float> Session::Impl::kept_logits(int pos) const noexcept {
    const int row = pos - logit_rows_pos;
    if (pos < 0 || pos >= n_past || row < 0 || row >= n_logit_rows) return {};
    return scratch.logits(row);
}

Status Session::Impl::rollback(int n) {
    EMBER_ASSERT(n >= 0 && n <= n_past);
    if (n == n_past) return Status::ok;
    if (n > 0) {
        if (const auto kept = kept_logits(n - 1); !kept.empty()) {
            std::copy(kept.begin(), kept.end(), logits.begin());
        } else {
            // Token n - 1 again at its position: its keys and values come out bitwise the same,
            // so rewriting them changes nothing even when a cancel stops the pass midway.
            rows[0] = {tokens[static_cast<std::size_t>(n - 1)], n - 1, 0, true};
            model::KvCache* caches[] = {&cache};
            if (!model_impl->forward.run(std::span(rows.data(), 1), caches, scratch, n_threads, cancel)) {
                return Status::cancelled;
            }
            const auto fresh = scratch.logits(0);
            std::copy(fresh.begin(), fresh.end(), logits.begin());
        }
    }
    tokens.resize(static_cast<std::size_t>(n));
    n_past = n;
    n_logit_rows = 0;
    rows_kept = false;
    has_logits = n > 0;
    cache.truncate(n);  // pages wholly past n go back
    return Status::ok;
}

void Session::Impl::drop_after(int n) {
    EMBER_ASSERT(n >= 0 && n <= n_past);
    if (n == n_past) return;
    const auto kept = n > 0 ? kept_logits(n - 1) : std::span<const float>();
    if (!kept.empty()) std::copy(kept.begin(), kept.end(), logits.begin());
    has_logits = !kept.empty();
    tokens.resize(static_cast<std::size_t>(n));
    n_past = n;
    n_logit_rows = 0;
    rows_kept = false;
    cache.truncate(n);  // pages wholly past n go back
}

Session::Session(const Model& model, SessionOptions options)
    : impl_(std::make_unique<Impl>(model, options)) {}
Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Status Session::prefill(std::span<const Token> tokens) {
    Impl& s = *impl_;
    if (tokens.empty()) return Status::invalid_input;
    s.check_ids(tokens, "prompt token ");
    // Check that the tokens fit (with context shift: in the context less the kept tokens, and
    // every chunk after the shifts it needs) before any work.
    const auto n_total = static_cast<std::int64_t>(tokens.size());
    const std::int64_t room = s.options.context_shift ? s.n_ctx - std::min(s.n_past, s.options.n_keep)
                                                      : s.n_ctx - s.n_past;
    {
        std::int64_t past = s.n_past, done = 0;
        while (done < n_total) {
            const std::int64_t n = std::min<std::int64_t>(s.n_batch, n_total - done);
            while (s.options.context_shift && past + n > s.n_ctx &&
                   model::context_shift_discard(past, s.options.n_keep) > 0) {
                past -= model::context_shift_discard(past, s.options.n_keep);
            }
            if (past + n > s.n_ctx || n_total > room) {
                fail("prompt of " + std::to_string(n_total) + " tokens does not fit in the context: " +
                     std::to_string(s.n_past) + " tokens used of " + std::to_string(s.n_ctx) +
                     (s.options.context_shift
                          ? " (with context shift keeping " + std::to_string(s.options.n_keep) + ")"
                          : std::string()));
            }
            past += n;
            done += n;
        }
    }
    const auto t0 = SessionClock::now();
    const bool first = s.metrics.prompt_tokens == 0 && s.metrics.generated_tokens == 0;
    Status status = Status::ok;
    std::int64_t done = 0;
    while (done < n_total) {
        const int n = static_cast<int>(std::min<std::int64_t>(s.n_batch, n_total - done));
        while (s.n_past + n > s.n_ctx) s.shift();  // only reached with context_shift (checked)
        status = s.run_chunk(tokens.data() + done, n);
        if (status != Status::ok) break;
        done += n;
        if (s.progress) s.progress(done, n_total);
    }
    const double elapsed = seconds_since(t0);
    s.metrics.prompt_tokens += done;
    s.metrics.prefill_seconds += elapsed;
    if (status == Status::ok) {
        if (first) s.metrics.ttft_seconds = elapsed;
        s.metrics.last_ttft_seconds = elapsed;
        s.metrics.last_prompt_tokens = n_total;
        s.metrics.prefills += 1;
    }
    return status;
}

Status Session::decode(Token token) {
    Impl& s = *impl_;
    if (!s.valid_token(token)) return Status::invalid_input;
    if (s.n_past >= s.n_ctx) {
        if (!s.can_shift()) return Status::context_full;
        s.shift();
    }
    const auto t0 = SessionClock::now();
    const Status status = s.run_chunk(&token, 1);
    if (status == Status::ok) {
        s.metrics.generated_tokens += 1;
        s.metrics.decode_seconds += seconds_since(t0);
    }
    return status;
}

Status Session::evaluate(std::span<const Token> tokens) {
    Impl& s = *impl_;
    if (tokens.empty()) return Status::invalid_input;
    s.check_ids(tokens, "Session::evaluate: token ");
    const auto n = static_cast<std::int64_t>(tokens.size());
    if (n > s.n_batch) {
        fail("Session::evaluate: " + std::to_string(n) + " tokens is more than one forward pass takes (" +
             std::to_string(s.n_batch) + ", SessionOptions::batch)");
    }
    if (n > s.n_ctx - s.n_past) {
        fail("Session::evaluate: " + std::to_string(n) + " tokens do not fit in the context: " +
             std::to_string(s.n_past) + " tokens used of " + std::to_string(s.n_ctx));
    }
    const auto t0 = SessionClock::now();
    const Status status = s.run_rows(tokens.data(), static_cast<int>(n), /*all_logits=*/true);
    if (status == Status::ok) {
        s.metrics.prompt_tokens += n;
        s.metrics.prefill_seconds += seconds_since(t0);
    }
    return status;
}

Status Session::truncate(int n) {
    Impl& s = *impl_;
    if (n < 0 || n > s.n_past) {
        fail("Session::truncate(" + std::to_string(n) + "): the session holds " + std::to_string(s.n_past) +
             " tokens");
    }
    if (n == s.n_past) return Status::ok;
    if (n > 0 && n - 1 < s.cache.rewind_limit()) {
        fail("Session::truncate(" + std::to_string(n) + "): the sliding-window layers no longer hold what "
             "position " + std::to_string(n - 1) + " reads (truncate to " + std::to_string(s.cache.rewind_limit() + 1) +
             " tokens or more)");
    }
    const Status status = s.rollback(n);
    if (status == Status::ok) s.stream->reset();
    return status;
}

std::span<const float> Session::logits() const noexcept {
    if (!impl_->has_logits) return {};
    return impl_->logits;
}

std::span<const float> Session::logits_at(int i) const {
    const Impl& s = *impl_;
    if (!s.rows_kept) {
        fail("Session::logits_at(" + std::to_string(i) + ") needs the logits of every row: evaluate(), or "
             "prefill() with SessionOptions::logits_all, as the last forward pass");
    }
    if (i < 0 || i >= s.n_logit_rows) {
        fail("Session::logits_at(" + std::to_string(i) + "): the last forward pass has " +
             std::to_string(s.n_logit_rows) + " rows");
    }
    return s.scratch.logits(i);
}

const std::vector<Token>& Session::tokens() const noexcept { return impl_->tokens; }
int Session::n_past() const noexcept { return impl_->n_past; }
int Session::context() const noexcept { return impl_->n_ctx; }

std::string Session::detokenize_stream(Token token) { return impl_->stream->push(token); }
std::string Session::flush_stream() { return impl_->stream->flush(); }

void Session::set_cancel_callback(std::function<bool()> should_cancel) {
    impl_->cancel = std::move(should_cancel);
}

void Session::set_progress_callback(std::function<void(std::int64_t, std::int64_t)> on_progress) {
    impl_->progress = std::move(on_progress);
}

void Session::reset() {
    Impl& s = *impl_;
    s.n_past = 0;
    s.n_logit_rows = 0;
    s.rows_kept = false;
    s.cache.clear();
    s.tokens.clear();
    s.has_logits = false;
    s.stream->reset();
    s.metrics = {};
}

Session Session::clone() const {
    auto copy = std::make_unique<Impl>(*impl_);
    copy->tokens.reserve(static_cast<std::size_t>(copy->n_ctx));  // decode must not allocate
    return Session(std::move(copy));
}

const Metrics& Session::metrics() const noexcept { return impl_->metrics; }
const SessionOptions& Session::options() const noexcept { return impl_->options; }
const Model& Session::model() const noexcept { return impl_->model; }

}  // namespace ember

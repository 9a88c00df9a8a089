#include "ember/session.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "api/model_impl.hpp"
#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"

namespace ember {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

struct Session::Impl {
    Impl(const Model& m, SessionOptions o) : model(m), model_impl(m.impl()), options(o) {
        const auto& c = model_impl->config;
        if (o.context < 0) fail("SessionOptions::context must be >= 0, got " + std::to_string(o.context));
        if (o.threads < 0) fail("SessionOptions::threads must be >= 0, got " + std::to_string(o.threads));
        if (o.batch <= 0) fail("SessionOptions::batch must be > 0, got " + std::to_string(o.batch));
        n_ctx = o.context > 0 ? o.context : static_cast<int>(std::min<std::int64_t>(c.n_ctx_train, 4096));
        n_threads = resolve_threads(o.threads > 0 ? o.threads : model_impl->options.threads);
        n_batch = std::min(o.batch, n_ctx);
        cache = model::KvCache(c, n_ctx);
        scratch = model::ForwardScratch(c, model_impl->weights, n_batch, n_ctx,
                                        o.logits_all ? n_batch : 1, n_threads);
        rows.resize(static_cast<std::size_t>(n_batch));
        tokens.reserve(static_cast<std::size_t>(n_ctx));
        logits.resize(static_cast<std::size_t>(c.n_vocab));
        // Streamed text continues the prompt, so a leading space is kept (unlike decode()).
        stream.emplace(*model_impl->tokenizer, /*strip_leading_space=*/false);
    }

    bool valid_token(Token t) const noexcept { return t >= 0 && t < model_impl->config.n_vocab; }

    // Runs tokens[0, n) at positions n_past.. as one forward pass.
    Status run_chunk(const Token* chunk, int n, bool last_chunk) {
        for (int i = 0; i < n; ++i) {
            rows[static_cast<std::size_t>(i)] = {chunk[i], n_past + i, 0,
                                                 options.logits_all || (last_chunk && i == n - 1)};
        }
        model::KvCache* caches[] = {&cache};
        if (!model_impl->forward.run(std::span(rows.data(), static_cast<std::size_t>(n)), caches,
                                     scratch, n_threads, cancel)) {
            return Status::cancelled;
        }
        tokens.insert(tokens.end(), chunk, chunk + n);
        n_past += n;
        n_logit_rows = options.logits_all ? n : 1;
        if (last_chunk) {
            const auto last = scratch.logits(n_logit_rows - 1);
            std::copy(last.begin(), last.end(), logits.begin());
            has_logits = true;
        }
        return Status::ok;
    }

    Model model;
    std::shared_ptr<const detail::ModelImpl> model_impl;
    SessionOptions options;
    int n_ctx = 0, n_threads = 1, n_batch = 1, n_past = 0, n_logit_rows = 0;
    model::KvCache cache;
    model::ForwardScratch scratch;
    std::vector<model::BatchRow> rows;  // [n_batch]
    std::vector<Token> tokens;          // [n_past], capacity n_ctx
    std::vector<float> logits;          // [n_vocab] after the last processed token
    bool has_logits = false;
    std::optional<tokenizer::StreamDecoder> stream;
    std::function<bool()> cancel;
    Metrics metrics;
};

Session::Session(const Model& model, SessionOptions options)
    : impl_(std::make_unique<Impl>(model, options)) {}
Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Status Session::prefill(std::span<const Token> tokens) {
    Impl& s = *impl_;
    if (tokens.empty()) return Status::invalid_input;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (!s.valid_token(tokens[i])) {
            fail("prompt token " + std::to_string(i) + " has id " + std::to_string(tokens[i]) +
                 ", outside the vocabulary [0, " + std::to_string(s.model_impl->config.n_vocab) + ")");
        }
    }
    if (tokens.size() > static_cast<std::size_t>(s.n_ctx - s.n_past)) {
        fail("prompt of " + std::to_string(tokens.size()) + " tokens does not fit in the context: " +
             std::to_string(s.n_past) + " tokens used of " + std::to_string(s.n_ctx));
    }
    const auto t0 = Clock::now();
    const bool first = s.metrics.prompt_tokens == 0 && s.metrics.generated_tokens == 0;
    Status status = Status::ok;
    std::size_t done = 0;
    while (done < tokens.size()) {
        const int n = static_cast<int>(std::min<std::size_t>(s.n_batch, tokens.size() - done));
        status = s.run_chunk(tokens.data() + done, n, done + n == tokens.size());
        if (status != Status::ok) break;
        done += static_cast<std::size_t>(n);
    }
    s.metrics.prompt_tokens += static_cast<std::int64_t>(done);
    s.metrics.prefill_seconds += seconds_since(t0);
    if (first && status == Status::ok) s.metrics.ttft_seconds = seconds_since(t0);
    return status;
}

Status Session::decode(Token token) {
    Impl& s = *impl_;
    if (!s.valid_token(token)) return Status::invalid_input;
    if (s.n_past >= s.n_ctx) return Status::context_full;
    const auto t0 = Clock::now();
    const Status status = s.run_chunk(&token, 1, true);
    if (status == Status::ok) {
        s.metrics.generated_tokens += 1;
        s.metrics.decode_seconds += seconds_since(t0);
    }
    return status;
}

std::span<const float> Session::logits() const noexcept {
    if (!impl_->has_logits) return {};
    return impl_->logits;
}

std::span<const float> Session::logits_at(int i) const {
    const Impl& s = *impl_;
    if (!s.options.logits_all) fail("Session::logits_at needs SessionOptions::logits_all");
    if (i < 0 || i >= s.n_logit_rows) {
        fail("Session::logits_at(" + std::to_string(i) + "): the last chunk has " +
             std::to_string(s.n_logit_rows) + " rows");
    }
    return s.scratch.logits(i);
}

const std::vector<Token>& Session::tokens() const noexcept { return impl_->tokens; }
int Session::n_past() const noexcept { return impl_->n_past; }
int Session::context() const noexcept { return impl_->n_ctx; }

std::string Session::detokenize_stream(Token token) { return impl_->stream->push(token); }

void Session::set_cancel_callback(std::function<bool()> should_cancel) {
    impl_->cancel = std::move(should_cancel);
}

void Session::reset() {
    Impl& s = *impl_;
    s.n_past = 0;
    s.n_logit_rows = 0;
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
const Model& Session::model() const noexcept { return impl_->model; }

}  // namespace ember

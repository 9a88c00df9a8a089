// ember::generate_samples, make_samplers, best_of (ember/decoding.hpp): n samples of one prompt
// decoded together, each through the same detail::Generation as Session::generate.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include "api/generation.hpp"
#include "api/session_impl.hpp"
#include "decoding/fork_batch.hpp"
#include "ember/decoding.hpp"
#include "runtime/fail.hpp"

namespace ember {
namespace {

// One sample: its options (on_token tagged with its index), stream, generation and cache.
struct Sample {
    GenerateOptions options;
    std::optional<tokenizer::StreamDecoder> stream;
    std::optional<detail::Generation> gen;
    model::KvCache cache;
    int n_past = 0;
    std::size_t row = 0;  // its row in the last pass
    bool running = true;
    GenerateResult result;
};

void check_options(std::span<Sampler> samplers, const SampleOptions& o, const detail::SessionAccess::Impl& s) {
    if (samplers.empty() || samplers.size() > static_cast<std::size_t>(kMaxSamples)) {
        fail("generate_samples: " + std::to_string(samplers.size()) + " samplers; give 1 to " +
             std::to_string(kMaxSamples));
    }
    if (o.generate.on_token) fail("generate_samples: set SampleOptions::on_token, not GenerateOptions::on_token");
    if (o.generate.speculative != nullptr) fail("generate_samples: speculative decoding is not supported");
    if (!s.has_logits) fail("generate_samples: no logits yet; prefill a prompt first");
}

}  // namespace

SamplesResult generate_samples(Session& session, std::span<Sampler> samplers, const SampleOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    detail::SessionAccess::Impl& s = detail::SessionAccess::impl(session);
    check_options(samplers, options, s);
    const int room = s.n_ctx - s.n_past;
    const int max_new = options.generate.max_tokens < 0 ? room : std::min(options.generate.max_tokens, room);
    const int n = static_cast<int>(samplers.size());
    decoding::ForkBatch batch(s, n, max_new);

    std::vector<Sample> samples(samplers.size());
    for (int i = 0; i < n; ++i) {
        Sample& x = samples[static_cast<std::size_t>(i)];
        x.options = options.generate;
        if (options.on_token) {
            x.options.on_token = [&options, i](Token t, std::string_view text) { return options.on_token(i, t, text); };
        }
        x.stream.emplace(*s.stream);  // as a copy of the session would continue its stream
        x.gen.emplace(x.options, *s.model_impl->tokenizer, *x.stream);
        x.cache = batch.fork_prompt();
        x.n_past = s.n_past;
    }
    auto finish = [](Sample& x, StopReason reason, Status status, bool pending = false) {
        x.result = x.gen->finish(reason, status, pending);
        x.running = false;
        x.cache.clear();
    };

    std::vector<Token> tokens;
    std::vector<int> pos;
    std::vector<model::KvCache*> caches;
    bool first = true;
    for (;;) {
        // Session::generate's loop, for each running sample; the tokens to run go in one pass.
        tokens.clear();
        pos.clear();
        caches.clear();
        const bool cancel = s.cancel && s.cancel();
        for (int i = 0; i < n; ++i) {
            Sample& x = samples[static_cast<std::size_t>(i)];
            if (!x.running) continue;
            if (x.gen->at_limit()) { finish(x, StopReason::max_tokens, Status::ok); continue; }
            if (x.n_past >= s.n_ctx) { finish(x, StopReason::context_full, Status::context_full); continue; }
            if (cancel) { finish(x, StopReason::cancelled, Status::cancelled); continue; }
            const std::span<const float> logits = first ? std::span<const float>(s.logits) : batch.logits(x.row);
            const detail::Generation::Step step = x.gen->next(samplers[static_cast<std::size_t>(i)], logits);
            if (step.eog) { finish(x, StopReason::eog, Status::ok); continue; }
            // generate() decodes the token before it stops for these; nobody reads that cache here.
            if (step.stop_found) { finish(x, StopReason::stop_string, Status::ok); continue; }
            if (!step.go_on) { finish(x, StopReason::cancelled, Status::ok); continue; }
            x.row = tokens.size();
            tokens.push_back(step.token);
            pos.push_back(x.n_past);
            caches.push_back(&x.cache);
        }
        first = false;
        if (tokens.empty()) break;
        const bool ran = batch.run(tokens, pos, caches);
        for (Sample& x : samples) {
            if (!x.running) continue;
            if (!ran) finish(x, StopReason::cancelled, Status::cancelled, /*pending=*/true);
            else x.n_past += 1;
        }
    }

    SamplesResult result;
    for (Sample& x : samples) result.samples.push_back(std::move(x.result));
    result.stats = batch.stats();
    result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

std::vector<Sampler> make_samplers(const Model& model, SamplerOptions options, int n) {
    if (n < 1 || n > kMaxSamples) {
        fail("make_samplers: n must be in [1, " + std::to_string(kMaxSamples) + "], got " + std::to_string(n));
    }
    constexpr std::uint64_t kRandom = 0xFFFFFFFFu;
    std::vector<Sampler> out;
    out.reserve(static_cast<std::size_t>(n));
    out.emplace_back(model, options);
    const std::uint64_t base = out.front().seed();
    for (int i = 1; i < n; ++i) {
        options.seed = base + static_cast<std::uint64_t>(i);
        if (options.seed == kRandom) {
            fail("make_samplers: seed " + std::to_string(base) + " + " + std::to_string(i) +
                 " is 0xFFFFFFFF, which asks for a random seed; pick another seed");
        }
        out.emplace_back(model, options);
    }
    return out;
}

double mean_logprob(const GenerateResult& sample) {
    if (sample.tokens.empty()) return -INFINITY;
    if (sample.logprobs.size() != sample.tokens.size()) {
        fail("mean_logprob: the sample has no logprobs (set GenerateOptions::logprobs)");
    }
    double sum = 0.0;
    for (const TokenLogprobs& l : sample.logprobs) sum += l.logprob;
    return sum / static_cast<double>(sample.tokens.size());
}

std::size_t best_of(std::span<const GenerateResult> samples, const SampleScorer& scorer) {
    if (samples.empty()) fail("best_of: no samples");
    std::size_t best = 0;
    double best_score = -INFINITY;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const double score = scorer ? scorer(samples[i]) : mean_logprob(samples[i]);
        if (std::isnan(score)) fail("best_of: sample " + std::to_string(i) + " scored NaN");
        if (i == 0 || score > best_score) {
            best = i;
            best_score = score;
        }
    }
    return best;
}

}  // namespace ember

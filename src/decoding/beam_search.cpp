// ember::beam_search (ember/decoding.hpp): the exact search the header states, over hypotheses
// that share the prompt's KV pages and each other's copy-on-write (decoding/fork_batch.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "api/session_impl.hpp"
#include "decoding/beam_core.hpp"
#include "decoding/fork_batch.hpp"
#include "ember/decoding.hpp"
#include "runtime/fail.hpp"

namespace ember {
namespace {

// Hypotheses as KV caches in a ForkBatch: a parent's last child takes its cache, the others
// fork it (sharing its pages copy-on-write); each step is one pass over the new tokens.
class KvBeamModel final : public decoding::BeamModel {
public:
    KvBeamModel(detail::SessionAccess::Impl& s, decoding::ForkBatch& batch) : s_(s), batch_(batch) {
        caches_.push_back(batch.fork_prompt());
    }
    std::span<const float> logits(std::size_t h) override {
        return step_ == 0 ? std::span<const float>(s_.logits) : batch_.logits(h);
    }
    bool advance(std::span<const std::size_t> parents, std::span<const Token> tokens, bool run) override {
        std::vector<std::size_t> children(caches_.size(), 0);
        for (const std::size_t p : parents) children[p] += 1;
        std::vector<model::KvCache> next;
        next.reserve(parents.size());
        for (const std::size_t p : parents) {
            next.push_back(--children[p] == 0 ? std::move(caches_[p]) : batch_.fork(caches_[p]));
        }
        caches_ = std::move(next);  // lets go of the pages of hypotheses without survivors
        const int pos = s_.n_past + step_++;
        if (!run) return true;
        std::vector<int> positions(tokens.size(), pos);
        std::vector<model::KvCache*> caches;
        for (model::KvCache& c : caches_) caches.push_back(&c);
        return batch_.run(tokens, positions, caches);
    }
    bool is_end_of_generation(Token t) const override { return s_.model_impl->tokenizer->is_end_of_generation(t); }

private:
    detail::SessionAccess::Impl& s_;
    decoding::ForkBatch& batch_;
    std::vector<model::KvCache> caches_;
    int step_ = 0;
};

void check_options(const BeamSearchOptions& o, const detail::SessionAccess::Impl& s) {
    if (o.beams < 1 || o.beams > kMaxBeams) {
        fail("BeamSearchOptions::beams must be in [1, " + std::to_string(kMaxBeams) + "], got " + std::to_string(o.beams));
    }
    if (o.max_tokens < 1) fail("BeamSearchOptions::max_tokens must be >= 1, got " + std::to_string(o.max_tokens));
    if (o.n_best < 1 || o.n_best > o.beams) {
        fail("BeamSearchOptions::n_best must be in [1, beams = " + std::to_string(o.beams) + "], got " +
             std::to_string(o.n_best));
    }
    if (!std::isfinite(o.length_penalty)) fail("BeamSearchOptions::length_penalty must be finite");
    if (!s.has_logits) fail("beam_search: no logits yet; prefill a prompt first");
    // The last step's tokens are never run: the prompt and max_tokens - 1 tokens must fit.
    if (std::int64_t{s.n_past} + o.max_tokens - 1 > s.n_ctx) {
        fail("beam_search: " + std::to_string(o.max_tokens) + " tokens after " + std::to_string(s.n_past) +
             " do not fit in the context of " + std::to_string(s.n_ctx));
    }
}

BeamHypothesis finished(std::vector<Token> tokens, double logprob, bool done, float alpha,
                        const tokenizer::Tokenizer& tok) {
    BeamHypothesis h;
    h.tokens = std::move(tokens);
    h.logprob = logprob;
    h.done = done;
    const double n = static_cast<double>(h.tokens.size()) + (done ? 1.0 : 0.0);
    h.score = alpha == 0.0f ? logprob : logprob / std::pow(std::max(n, 1.0), static_cast<double>(alpha));
    tokenizer::StreamDecoder stream(tok, /*strip_leading_space=*/false);  // as Session::generate's text
    for (const Token t : h.tokens) h.text += stream.push(t);
    return h;
}

}  // namespace

BeamSearchResult beam_search(Session& session, const BeamSearchOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    detail::SessionAccess::Impl& s = detail::SessionAccess::impl(session);
    check_options(options, s);
    const auto& tok = *s.model_impl->tokenizer;
    const auto beams = static_cast<std::size_t>(options.beams);
    decoding::ForkBatch batch(s, options.beams, options.max_tokens - 1);

    KvBeamModel model(s, batch);
    decoding::BeamOutcome outcome = decoding::run_beam_search(model, beams, options.max_tokens);
    BeamSearchResult result;
    if (outcome.cancelled) result.status = Status::cancelled;

    // The winner among done and live hypotheses: stable, so equal scores keep done ones first
    // (in the order they finished), then live ones best first.
    std::vector<BeamHypothesis> all;
    for (decoding::RawHypothesis& h : outcome.hypotheses) {
        all.push_back(finished(std::move(h.tokens), h.logprob, h.done, options.length_penalty, tok));
    }
    std::stable_sort(all.begin(), all.end(), [](const BeamHypothesis& a, const BeamHypothesis& b) { return a.score > b.score; });
    all.resize(std::min(all.size(), static_cast<std::size_t>(options.n_best)));
    result.best = all.front();
    result.hypotheses = std::move(all);
    result.stats = batch.stats();
    result.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

}  // namespace ember

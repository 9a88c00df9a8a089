// Proposers for speculative decoding: they guess the tokens that follow a sequence. The pieces
// a batching engine reuses per sequence: propose, verify the rows (Sampler::sample_speculative),
// roll the rest back (Session rollback), record the outcome (DraftLength).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ember/error.hpp"
#include "ember/sampler.hpp"
#include "ember/types.hpp"

namespace ember::speculative {

/// Guessed tokens, with the distribution each was drawn from when drawn at random.
struct Proposal {
    std::vector<Token> tokens;
    /// With `sampled`: distributions[i] is q for tokens[i] (speculative sampling); otherwise the
    /// guesses are deterministic (q is a point mass on each). Entries past tokens.size() are
    /// kept only for their capacity.
    std::vector<std::vector<SampleCandidate>> distributions;
    bool sampled = false;

    void clear() noexcept {
        tokens.clear();
        sampled = false;
    }
    void add(Token t) { tokens.push_back(t); }
    void add(Token t, std::span<const SampleCandidate> q) {
        if (distributions.size() <= tokens.size()) distributions.emplace_back();
        distributions[tokens.size()].assign(q.begin(), q.end());
        tokens.push_back(t);
        sampled = true;
    }
    /// q for token i (`point` receives the point mass of a deterministic guess).
    std::span<const SampleCandidate> distribution(std::size_t i, SampleCandidate& point) const {
        if (sampled) return distributions[i];
        point = {tokens[i], 0.0f, 1.0f};
        return {&point, 1};
    }
};

/// What a proposer is asked for.
struct ProposeRequest {
    std::span<const Token> context;   ///< The sequence so far (the target's tokens and the next one).
    int max = 0;                      ///< Most tokens to guess (>= 1).
    const SamplerOptions* sampling = nullptr;  ///< The target's sampler options (draft sampling).
    std::uint64_t seed = 0;           ///< Seed for a draft sampler created for this generation.
    int n_ctx = 0, threads = 1, batch = 512;  ///< The target session's sizes.
    std::function<bool()> cancel;     ///< Polled during a draft model's passes.
    /// Stop guessing after a token this is true for (the target's end-of-generation tokens).
    std::function<bool(Token)> ends;
};

class Proposer {
public:
    virtual ~Proposer() = default;
    /// Appends up to req.max guesses to `out` (possibly none). Status::cancelled when req.cancel
    /// stopped a draft pass (`out` is then empty).
    virtual Status propose(const ProposeRequest& req, Proposal& out) = 0;
    /// Forgets any state kept between calls (a draft model's cached tokens).
    virtual void reset() {}
    /// Cost of one guessed token in target passes, not counting its verification row.
    virtual double cost_per_token() const noexcept = 0;
};

/// Prompt lookup (ngram_lookup.hpp).
class LookupProposer final : public Proposer {
public:
    explicit LookupProposer(int max_ngram) : max_ngram_(max_ngram) {}
    Status propose(const ProposeRequest& req, Proposal& out) override;
    double cost_per_token() const noexcept override { return 0.0; }

private:
    int max_ngram_;
};

}  // namespace ember::speculative

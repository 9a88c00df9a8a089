// ember/speculative.hpp: speculative decoding for Session::generate.
//
// A proposer guesses the next tokens cheaply; the session checks the guesses in ONE forward pass
// over all of them (Session::evaluate), keeps the longest accepted prefix plus one token of its
// own, and drops the rest of the pass (Session::truncate). Decode reads every weight once per
// pass, so each accepted guess is a token for almost nothing. The output does not change:
// greedy output is token for token plain greedy decoding (a row's logits never depend on the
// rows sharing its pass), and sampled output has exactly the distribution of plain sampling
// (speculative sampling, Sampler::sample_speculative).
//
// Two proposers:
//   - a draft model that shares the target's vocabulary (a smaller model of the family, or a
//     lower-bit quantization of the target), running in its own session whose KV cache follows
//     the target's tokens;
//   - prompt lookup: the tokens that followed the latest earlier occurrence of the last n tokens
//     in the session's own tokens (no second model; wins when the answer copies from the prompt:
//     summaries, code edits, retrieval answers).
//
//   ember::Model target = ember::Model::load("model-Q8_0.gguf");
//   ember::Model draft = ember::Model::load("model-Q4_0.gguf");
//   ember::SpeculativeOptions so;
//   so.draft = &draft;
//   ember::Speculator speculator(target, so);   // checks the vocabularies
//   ember::GenerateOptions g;
//   g.speculative = &speculator;
//   auto r = session.generate(sampler, g);      // session.metrics().acceptance_rate()
//
// Thread safety: a Speculator is used by one generate() at a time (like a Sampler); it keeps the
// draft model's session between calls, so a chat's turns reuse its KV cache.
#pragma once

#include <memory>

#include "ember/model.hpp"
#include "ember/types.hpp"

namespace ember {

namespace detail {
struct SpeculatorAccess;
}

/// Options for a Speculator: one proposer (a draft model or prompt lookup), and the draft length.
struct SpeculativeOptions {
    /// A draft model sharing the target's vocabulary (the Speculator keeps its own handle: the
    /// pointer need only be valid while the Speculator is constructed).
    const Model* draft = nullptr;
    /// Prompt lookup instead of a draft model: the longest n-gram matched, 1 to 16 (matches of
    /// n, n - 1, ... 1 tokens are tried, latest occurrence first). 0: off.
    int lookup_ngram = 0;
    /// Most tokens proposed per step (1 to 64).
    int max_draft = 8;
    /// Choose each step's draft length from the running acceptance rate (what maximizes the
    /// expected tokens per unit of work); false: always max_draft.
    bool adaptive = true;
    /// Threads of the draft model's session (0: the target session's).
    int draft_threads = 0;
};

/// What a Speculator did so far (also summed into the target Session's Metrics).
struct SpeculativeStats {
    std::int64_t steps = 0;     ///< Verification passes.
    std::int64_t proposed = 0;  ///< Tokens proposed.
    std::int64_t accepted = 0;  ///< Proposed tokens the target kept.
};

class Speculator {
public:
    /// Checks the options (ember::Error naming the one that is wrong) and, with a draft model,
    /// that its vocabulary is the target's: the same text and type for every token id (a larger
    /// vocabulary may add at most 128 unused padding tokens), else ember::Error naming the first
    /// token that differs.
    Speculator(const Model& target, SpeculativeOptions options);
    ~Speculator();
    Speculator(Speculator&&) noexcept;
    Speculator& operator=(Speculator&&) noexcept;
    Speculator(const Speculator&) = delete;
    Speculator& operator=(const Speculator&) = delete;

    const SpeculativeOptions& options() const noexcept;
    /// The draft length the next step asks for (max_draft unless adaptive).
    int draft_length() const noexcept;
    /// The running estimate of the chance that a proposed token is accepted.
    double acceptance_estimate() const noexcept;
    const SpeculativeStats& stats() const noexcept;
    /// Forgets the draft model's cached tokens and the running statistics.
    void reset();

private:
    friend struct detail::SpeculatorAccess;
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember

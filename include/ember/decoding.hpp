// ember/decoding.hpp: decoding strategies that spend more compute per prompt: beam search, n
// parallel samples and best-of-N. Each continues a Session after its prompt (prefill first) and
// leaves the Session unchanged: the prompt's keys and values are copied once into a paged pool
// and every hypothesis or sample shares them copy-on-write, and each step is ONE forward pass
// over all live hypotheses (or samples), so N of them cost far less than N sessions.
//
//   ember::Session session(model);
//   session.prefill(model.tokenize("Once upon a time"));
//   ember::BeamSearchResult best = ember::beam_search(session, {.beams = 4, .max_tokens = 32});
//
//   std::vector<ember::Sampler> samplers = ember::make_samplers(model, {.seed = 7}, 8);
//   ember::SamplesResult r = ember::generate_samples(session, samplers, {.generate = {.max_tokens = 64,
//                                                                         .logprobs = true}});
//   const std::size_t pick = ember::best_of(r.samples);  // by mean log-probability
//
// Results do not depend on the thread count, and sample i is token for token what a lone
// Session::generate with samplers[i] gives (batch invariance).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ember/export.h"
#include "ember/model.hpp"
#include "ember/sampler.hpp"
#include "ember/session.hpp"
#include "ember/types.hpp"

namespace ember {

/// Most beams (BeamSearchOptions::beams) and samples (generate_samples) one call takes.
inline constexpr int kMaxBeams = 256;
inline constexpr int kMaxSamples = 256;

/// What a beam search or a set of samples cost and shared.
struct DecodingStats {
    std::int64_t steps = 0;           ///< Forward passes after the prompt.
    std::int64_t rows = 0;            ///< Rows (hypotheses or samples) those passes ran.
    /// KV pages (one layer x a block of positions) handed to a hypothesis or sample by sharing
    /// instead of copying or recomputing them: the prompt's pages for each fork, and a
    /// surviving hypothesis's pages for each extra child.
    std::int64_t kv_blocks_shared = 0;
    std::int64_t kv_blocks_copied = 0;  ///< Shared pages copied before a write (copy-on-write).
    double seconds = 0.0;             ///< Wall time of the call.
};

/// Options for beam_search. The search, exactly: every step extends each live hypothesis by
/// every token; the `beams` extensions with the highest sum of log-probabilities (natural-log
/// softmax of the raw logits: temperature 1, no sampler stage) stay live, ties going to the
/// lower token id, then to the earlier hypothesis (live ones are ordered best first). An
/// extension that picks an end-of-generation token is done and leaves the beam (its score: its
/// sum, the end-of-generation token included). After max_tokens steps, or when no live
/// hypothesis is left, the best of the done and live hypotheses wins.
struct BeamSearchOptions {
    int beams = 4;          ///< Live hypotheses, 1..kMaxBeams (1: greedy by log-probability).
    int max_tokens = 32;    ///< Steps, >= 1; the prompt plus max_tokens - 1 must fit the context.
    /// Length penalty alpha for the final choice: a hypothesis of n tokens (its end-of-generation
    /// token included) scores logprob / n^alpha. 0 (the default): the plain sum, as above.
    /// Must be finite. Only the final ranking uses it (live hypotheses all have one length).
    float length_penalty = 0.0f;
    int n_best = 1;         ///< Hypotheses returned in BeamSearchResult::hypotheses, 1..beams.
};

/// One finished or live hypothesis of a beam search.
struct BeamHypothesis {
    std::vector<Token> tokens{};  ///< After the prompt, without the end-of-generation token.
    std::string text{};           ///< Their text (as Session::generate would produce it).
    double logprob = 0.0;         ///< Sum of log-probabilities (the end-of-generation token's too).
    double score = 0.0;           ///< logprob with the length penalty (== logprob without one).
    bool done = false;            ///< Ended by an end-of-generation token.
};

/// What beam_search found: the winner, and the n_best best hypotheses (winner first).
struct BeamSearchResult {
    BeamHypothesis best{};
    /// ok, or cancelled when the session's cancel callback stopped a step (the best so far won).
    Status status = Status::ok;
    std::vector<BeamHypothesis> hypotheses{};
    DecodingStats stats{};
};

/// Beam search after the session's tokens (prefill a prompt first). The session is unchanged.
/// Throws ember::Error for invalid options, a session without logits, or max_tokens that do
/// not fit in the rest of the context.
EMBER_API BeamSearchResult beam_search(Session& session, const BeamSearchOptions& options);

/// Options for generate_samples: `generate` as for Session::generate (max_tokens, stop strings,
/// logprobs), except that its on_token and speculative must be empty (ember::Error otherwise);
/// `on_token` streams instead, with the sample's index.
struct SampleOptions {
    GenerateOptions generate{};
    /// Called for every sample's tokens, as GenerateOptions::on_token with the sample's index.
    /// Return false to stop that sample (StopReason::cancelled).
    std::function<bool(int sample, Token token, std::string_view text)> on_token{};
};

/// One result per sampler, in order.
struct SamplesResult {
    std::vector<GenerateResult> samples{};
    DecodingStats stats{};
};

/// Samples one continuation per sampler (1..kMaxSamples of them) after the session's tokens
/// (prefill a prompt first), all decoded together: sample i is exactly what
/// Session::generate(samplers[i], options.generate) would give on a copy of this session. The
/// session is unchanged. Samples stop as generate() does; at a full context they stop with
/// StopReason::context_full (no context shift). Throws ember::Error for a session without
/// logits or bad options, and passes on the samplers' and on_token's exceptions.
EMBER_API SamplesResult generate_samples(Session& session, std::span<Sampler> samplers,
                                         const SampleOptions& options = {});

/// n samplers for `model` with `options`, the i-th seeded with seed + i (a random seed when
/// options.seed is 0xFFFFFFFF: then the first's random seed + i), so that sample i equals a
/// lone run with seed + i. Throws ember::Error for n outside 1..kMaxSamples, invalid options,
/// or when seed + i would be 0xFFFFFFFF (which means "random").
EMBER_API std::vector<Sampler> make_samplers(const Model& model, SamplerOptions options, int n);

/// Scores a sample for best_of (higher is better).
using SampleScorer = std::function<double(const GenerateResult& sample)>;

/// Mean log-probability of a sample's tokens (GenerateOptions::logprobs must have been on);
/// -INFINITY for a sample without tokens. Throws ember::Error when the logprobs are missing.
EMBER_API double mean_logprob(const GenerateResult& sample);

/// Best-of-N: the index of the sample with the highest score (`scorer`, or mean_logprob when
/// empty); ties go to the lower index. Throws ember::Error for no samples or a NaN score.
EMBER_API std::size_t best_of(std::span<const GenerateResult> samples, const SampleScorer& scorer = {});

}  // namespace ember

// ember/sampler.hpp: turns logits into the next token.
//
// A Sampler is a chain of stages over a preallocated candidate array. The default order is
// llama.cpp's default chain (common_sampler): logit bias, penalties (repetition, frequency,
// presence over the last `penalty_last_n` accepted tokens), top-k, typical-p, top-p, min-p,
// temperature, then a seeded draw from the softmax of what is left. SamplerOptions::order
// replaces the stage order (the draw always comes last).
//
// With temperature <= 0 the draw is greedy: only the logit-bias and penalty stages run (in their
// configured order), the filtering stages are skipped (none of them except typical-p can remove the
// highest-logit token), nothing is sorted, and the token with the highest logit is taken (ties go
// to the lowest id). The final distribution is then a point mass: last().probability is 1 and
// last().entropy is 0.
//
// The same seed, options and logits give the same tokens on every run and every platform: the
// RNG is xoshiro256** seeded through splitmix64, and the uniform draw is built from its bits.
// sample() allocates nothing once the first call has sized its buffers for the vocabulary.
//
// Option ranges (the constructor throws ember::Error for NaN anywhere, and as noted):
//   temperature  <= 0: greedy.
//   top_k        <= 0: off; >= vocabulary: off.
//   top_p        >= 1: off; <= 0: keeps only the most probable token (llama.cpp's behaviour).
//   min_p        <= 0: off; >  1: keeps only the most probable token.
//   typical_p    >= 1: off; <= 0: keeps only the most typical token.
//   repeat_penalty must be > 0 (1: off), else ember::Error.
//   penalty_last_n must be in [0, kMaxPenaltyWindow] (0: penalties off), else ember::Error.
//   logit_bias   tokens must be >= 0 and biases must not be +INFINITY (-INFINITY bans a token);
//                a token at or past the vocabulary size makes sample() throw ember::Error.
// Every filtering stage keeps at least one candidate (llama.cpp's min_keep = 1).
//
// Structured output: SamplerOptions::grammar (GBNF, llama.cpp's grammar format) or
// SamplerOptions::json_schema (a JSON Schema, converted to a grammar as llama.cpp does) makes
// every sampled token keep the output a prefix of a sentence of the grammar, and allows the
// end-of-generation tokens only where the output is a complete sentence. A grammar needs the
// model's vocabulary: construct the sampler with Sampler(model, options). The grammar stage
// masks the tokens the grammar rejects (their probability becomes zero); by default it runs
// first, so the filtering stages and the draw see only allowed tokens (the exact constrained
// distribution). Placed later in SamplerOptions::order it tests only the candidates left then
// (faster, e.g. after top_k, but the filters then also count tokens the grammar rejects).
// See docs/grammars.md.
//
// Thread safety: a Sampler is not shared; give each Session its own.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ember/export.h"
#include "ember/types.hpp"

namespace ember {

/// Largest SamplerOptions::penalty_last_n (the window is allocated up front).
inline constexpr int kMaxPenaltyWindow = 1 << 20;

class Model;

/// One stage of the sampling chain (for SamplerOptions::order).
enum class SamplerStage { penalties, logit_bias, top_k, typical_p, top_p, min_p, temperature, grammar };

/// Options for Sampler. The defaults are llama.cpp's defaults.
struct SamplerOptions {
    float temperature = 0.8f;      ///< <= 0: greedy.
    int top_k = 40;                ///< <= 0: off.
    float top_p = 0.95f;           ///< >= 1: off.
    float min_p = 0.05f;           ///< <= 0: off. Keeps tokens with p >= min_p * p_max.
    float typical_p = 1.0f;        ///< >= 1: off. Locally typical sampling.
    float repeat_penalty = 1.0f;   ///< 1: off. Divides positive logits, multiplies negative ones.
    float frequency_penalty = 0.0f;  ///< Subtracts count * this from a repeated token's logit.
    float presence_penalty = 0.0f;   ///< Subtracts this from any repeated token's logit.
    int penalty_last_n = 64;       ///< How many recent tokens the penalties look at (0: off).
    std::uint64_t seed = 0xFFFFFFFFu;  ///< RNG seed; 0xFFFFFFFF picks a random seed.
    /// Added to the logit of a token before the other stages (e.g. -INFINITY bans it).
    std::vector<std::pair<Token, float>> logit_bias{};
    /// Stage order; empty means the default order above. A stage may be left out (it then does
    /// not run) or repeated, except the grammar stage: with a grammar and an order that does
    /// not name it, it runs first.
    std::vector<SamplerStage> order{};
    /// GBNF grammar the output must match (start rule `root`); empty: none. Needs
    /// Sampler(model, options). Invalid grammars make the constructor throw ember::Error with
    /// the line and column.
    std::string grammar{};
    /// JSON Schema (as JSON text) the output must be an instance of; converted to a grammar
    /// (see json_schema_to_grammar in ember/grammar.hpp). `{"type": "object"}` is OpenAI's
    /// json_object mode (any JSON object). Not together with `grammar`.
    std::string json_schema{};
};

/// The probability and entropy of the distribution the last token was drawn from.
struct SampleInfo {
    Token token = -1;
    float probability = 0.0f;  ///< p(token) in the final distribution.
    float entropy = 0.0f;      ///< Shannon entropy (nats) of the final distribution.
};

/// One entry of the candidate array: a token, its logit after the stages, and its probability in
/// the final distribution.
struct SampleCandidate {
    Token token = -1;
    float logit = 0.0f;
    float probability = 0.0f;
};

/// What Sampler::sample_speculative decided: the token to emit, and whether it is the draft.
struct SpeculativeSample {
    Token token = -1;
    bool accepted = false;  ///< token is the drafted token (else a replacement for it).
};

/// A token and its log-probability.
struct TokenLogprob {
    Token token = -1;
    float logprob = 0.0f;  ///< Natural log of the token's probability (<= 0; -INFINITY when banned).
};

/// A chosen token's log-probability and the most likely tokens at its position: what OpenAI's
/// `logprobs.content[i]` reports (`logprob`, `top_logprobs`).
struct TokenLogprobs {
    Token token = -1;
    float logprob = 0.0f;
    std::vector<TokenLogprob> top{};  ///< Most likely first; equal ones in token order.
};

/// Log-probabilities of the model's own distribution: the natural-log softmax of the raw
/// `logits`, before any sampler stage (penalties, logit bias, temperature, top-k/p, min-p), which
/// is what OpenAI's API and vLLM report by default. (The distribution a token was actually drawn
/// from, after the stages, is Sampler::last() and Sampler::candidates().) Returns the log-
/// probability of `token` and the `top_n` most likely tokens (fewer when the vocabulary is
/// smaller). Throws ember::Error for empty logits, a NaN or +INFINITY logit, all logits
/// -INFINITY, `token` outside [0, logits.size()) or `top_n` < 0.
EMBER_API TokenLogprobs logprobs(std::span<const float> logits, Token token, int top_n = 0);

class EMBER_API Sampler {
public:
    /// A greedy sampler (temperature 0).
    Sampler();
    /// Throws ember::Error for invalid options (see the ranges above), and for a grammar or
    /// JSON Schema (those need the model's vocabulary: use the next constructor).
    explicit Sampler(SamplerOptions options);
    /// A sampler for `model`'s vocabulary: needed for SamplerOptions::grammar and json_schema
    /// (the model's token texts are indexed once per Model and shared by its samplers). Throws
    /// ember::Error for invalid options, grammars and schemas.
    Sampler(const Model& model, SamplerOptions options);
    ~Sampler();
    Sampler(Sampler&&) noexcept;
    Sampler& operator=(Sampler&&) noexcept;
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    /// Picks the next token from `logits` (one float per vocabulary entry) and accepts it into the
    /// penalty history (and the grammar). Allocates nothing once the first call has sized its
    /// buffers (with a grammar: see docs/grammars.md for the rare exceptions). Throws
    /// ember::Error for an empty span, a NaN logit, a logit_bias token outside the vocabulary,
    /// when every token has probability zero (all logits -INFINITY), and when the grammar allows
    /// no token (e.g. it needs a character no token has, or it ends and the vocabulary has no
    /// end-of-generation token).
    Token sample(std::span<const float> logits);

    /// Speculative sampling (Leviathan et al. 2023; Chen et al. 2023): checks `draft`, a token a
    /// proposer drew from `draft_distribution` (q: tokens and probabilities, e.g. a draft model's
    /// Sampler::candidates(); a single entry with probability 1 for a deterministic guess),
    /// against p, the final distribution sample() would draw from for `logits`. Keeps the draft
    /// with probability min(1, p(draft) / q(draft)), else draws a replacement from
    /// norm(max(0, p - q)); either way the token is distributed exactly as sample()'s, and it goes
    /// into the penalty history. Greedy: keeps the draft when it is the token sample() would pick,
    /// else returns that token. last() and candidates() describe p. Throws ember::Error as
    /// sample() does, and for a negative draft or one q gives no probability (not greedy).
    SpeculativeSample sample_speculative(std::span<const float> logits, Token draft,
                                         std::span<const SampleCandidate> draft_distribution);

    /// Adds a token to the penalty history without sampling (e.g. the prompt tokens). The
    /// grammar does not see it. Throws ember::Error for a negative token.
    void accept(Token token);

    /// True with a grammar or JSON Schema.
    bool has_grammar() const noexcept;
    /// True when the tokens sampled so far form a complete match of the grammar (so an
    /// end-of-generation token may come next); true without a grammar.
    bool grammar_complete() const noexcept;

    /// Replaces the penalty history with the last penalty_last_n of `tokens` (e.g. a session's
    /// tokens after Session::truncate), keeping the RNG. Throws ember::Error for a negative token
    /// (the history is unchanged then). The grammar's state is not rewound.
    void set_history(std::span<const Token> tokens);

    /// Probability and entropy of the last sample() call.
    const SampleInfo& last() const noexcept;

    /// The candidates the last sample() call drew from, with their final probabilities (summing
    /// to 1), in the order the chain left them. Valid until the next sample() or reset().
    std::span<const SampleCandidate> candidates() const noexcept;

    /// Clears the penalty history, reseeds the RNG with the seed in use (seed()) and puts the
    /// grammar back at its start.
    void reset();
    /// Puts the grammar back at its start (e.g. for the next answer of a chat), keeping the
    /// penalty history and the RNG. Does nothing without a grammar.
    void reset_grammar();

    /// The seed in use: options().seed, or the random seed picked when that is 0xFFFFFFFF.
    std::uint64_t seed() const noexcept;

    /// The RNG state, the penalty history and the grammar position, as versioned
    /// little-endian bytes with a checksum, for saving and restoring a session exactly.
    std::vector<std::uint8_t> save_state() const;
    /// Restores what save_state() wrote (from this or another sampler; a history longer than this
    /// sampler's penalty_last_n keeps its newest tokens). A grammar position restores only into
    /// a sampler with the same grammar. Throws ember::Error if the bytes are truncated, corrupt,
    /// from an unknown version, or hold a grammar position this sampler cannot take (another
    /// grammar, or none; or no position while this sampler has a grammar); the sampler is
    /// unchanged then.
    void restore_state(std::span<const std::uint8_t> bytes);

    const SamplerOptions& options() const noexcept;

private:
    struct EMBER_HIDDEN Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember

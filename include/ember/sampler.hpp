// ember/sampler.hpp: turns logits into the next token.
//
// A Sampler is a chain of stages over a preallocated candidate array, applied in this default
// order (as llama.cpp's default chain): penalties (repetition, frequency, presence over the last
// `penalty_last_n` accepted tokens), logit bias, top-k, typical-p, top-p, min-p, temperature, then
// a seeded draw. With temperature <= 0 the draw is greedy (the highest logit; ties go to the
// lowest id). The same seed, options and logits give the same tokens on every run.
//
// Thread safety: a Sampler is not shared; give each Session its own.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "ember/types.hpp"

namespace ember {

/// One stage of the sampling chain (for SamplerOptions::order).
enum class SamplerStage { penalties, logit_bias, top_k, typical_p, top_p, min_p, temperature };

/// Options for Sampler. The defaults are llama.cpp's defaults.
struct SamplerOptions {
    float temperature = 0.8f;      ///< <= 0: greedy.
    int top_k = 40;                ///< <= 0: off.
    float top_p = 0.95f;           ///< >= 1: off.
    float min_p = 0.05f;           ///< <= 0: off.
    float typical_p = 1.0f;        ///< >= 1: off.
    float repeat_penalty = 1.0f;   ///< 1: off. Divides positive logits, multiplies negative ones.
    float frequency_penalty = 0.0f;  ///< Subtracts count * this from a repeated token's logit.
    float presence_penalty = 0.0f;   ///< Subtracts this from any repeated token's logit.
    int penalty_last_n = 64;       ///< How many recent tokens the penalties look at (0: off).
    std::uint64_t seed = 0xFFFFFFFFu;  ///< RNG seed; 0xFFFFFFFF picks a random seed.
    /// Added to the logit of a token before the other stages (e.g. -INFINITY bans it).
    std::vector<std::pair<Token, float>> logit_bias;
    /// Stage order; empty means the default order above.
    std::vector<SamplerStage> order;
};

/// The probability and entropy of the distribution the last token was drawn from.
struct SampleInfo {
    Token token = -1;
    float probability = 0.0f;  ///< p(token) in the final distribution.
    float entropy = 0.0f;      ///< Shannon entropy (nats) of the final distribution.
};

class Sampler {
public:
    /// A greedy sampler (temperature 0).
    Sampler();
    explicit Sampler(SamplerOptions options);
    ~Sampler();
    Sampler(Sampler&&) noexcept;
    Sampler& operator=(Sampler&&) noexcept;
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    /// Picks the next token from `logits` (one float per vocabulary entry) and accepts it into the
    /// penalty history. Allocates nothing once the first call has sized its buffers.
    Token sample(std::span<const float> logits);

    /// Adds a token to the penalty history without sampling (e.g. the prompt tokens).
    void accept(Token token);

    /// Probability and entropy of the last sample() call.
    const SampleInfo& last() const noexcept;

    /// Clears the penalty history and reseeds the RNG with the original seed.
    void reset();

    /// The RNG state, for saving and restoring a session exactly.
    std::vector<std::uint8_t> save_state() const;
    void restore_state(std::span<const std::uint8_t> bytes);  ///< Throws ember::Error if invalid.

    const SamplerOptions& options() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember

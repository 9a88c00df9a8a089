// The sampling stages: each works in place on a candidate array, as llama.cpp's samplers do on
// llama_token_data_array. Filtering stages keep at least one candidate. Ordering between
// candidates is a strict total order (higher logit first, then lower token id), so results do not
// depend on the standard library's sort algorithms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "ember/sampler.hpp"
#include "sampling/penalty_history.hpp"

namespace ember::sampling {

struct CandidateArray {
    SampleCandidate* data = nullptr;
    std::size_t size = 0;
    bool sorted = false;    ///< data[0..size) is in rank order (ranks_before).
    bool identity = false;  ///< data[i].token == i for every i: a token's slot is known.
};

/// Higher logit first; equal logits: lower token id first.
inline bool ranks_before(const SampleCandidate& a, const SampleCandidate& b) noexcept {
    return a.logit > b.logit || (a.logit == b.logit && a.token < b.token);
}

/// Adds biases to logits. `dense_bias` holds the bias of every token (size >= the largest id + 1)
/// and is read only when the array is not in identity layout.
void apply_logit_bias(CandidateArray& cur, std::span<const std::pair<Token, float>> bias,
                      std::span<const float> dense_bias);

struct PenaltyParams {
    float repeat = 1.0f;
    float frequency = 0.0f;
    float presence = 0.0f;
};

/// A logit after llama.cpp's penalties for a token seen `count` > 0 times.
inline float penalized(float logit, std::int32_t count, const PenaltyParams& p) noexcept {
    logit = logit <= 0.0f ? logit * p.repeat : logit / p.repeat;
    return logit - (static_cast<float>(count) * p.frequency + p.presence);
}

/// llama.cpp's penalties over the tokens in `history`: for a token seen `count` > 0 times, a
/// logit <= 0 is multiplied by `repeat` and a positive one divided by it, then
/// count * frequency + presence is subtracted. `counts` is zeroed scratch with one slot per
/// vocabulary entry; it is left zeroed. History tokens outside `counts` are ignored.
void apply_penalties(CandidateArray& cur, const PenaltyHistory& history, const PenaltyParams& p,
                     std::span<std::int32_t> counts);

/// The same penalties on a dense array of logits indexed by token (the greedy path).
void apply_penalties(std::span<float> logits, const PenaltyHistory& history,
                     const PenaltyParams& p, std::span<std::int32_t> counts);

/// Keeps the k highest-ranked candidates, sorted. k <= 0 or k >= size: no change.
void apply_top_k(CandidateArray& cur, int k);

/// Keeps the smallest rank-ordered prefix whose probability reaches p (at least one candidate).
/// p >= 1: no change.
void apply_top_p(CandidateArray& cur, float p);

/// Keeps candidates with probability >= p * p_max (at least the top one). p <= 0: no change.
void apply_min_p(CandidateArray& cur, float p);

/// Scratch for typical-p, one entry per candidate.
struct TypicalScratch {
    struct Scored {
        float score;
        std::uint32_t index;
    };
    std::span<Scored> scored;
    std::span<SampleCandidate> reordered;
};

/// Locally typical sampling (Meister et al.), as llama.cpp: orders candidates by
/// |-log p - entropy| and keeps the shortest prefix whose probability exceeds p (at least one).
/// p >= 1: no change.
void apply_typical_p(CandidateArray& cur, float p, const TypicalScratch& scratch);

/// Divides every logit by t (t > 0).
void apply_temperature(CandidateArray& cur, float t);

/// Fills probability with the softmax of the logits (max subtracted first). Needs a finite max.
void softmax(CandidateArray& cur);

/// Index of the highest-ranked candidate (ties: lowest token id); no sorting.
std::size_t argmax(const CandidateArray& cur);

/// Draws an index with the probabilities softmax() left, given u uniform in [0, 1). A candidate
/// with probability 0 is never drawn.
std::size_t draw(const CandidateArray& cur, double u);

/// Shannon entropy (nats) of the probabilities.
float entropy(const CandidateArray& cur);

}  // namespace ember::sampling

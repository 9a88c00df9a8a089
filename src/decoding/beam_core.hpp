// Beam search's loop, apart from KV caches and forward passes (so that it can be checked on
// synthetic models): select_beams each step, end-of-generation extensions leave the beam, the
// survivors go to the model for the next step's logits.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "decoding/beam_select.hpp"
#include "ember/types.hpp"

namespace ember::decoding {

/// What the search needs from a model.
class BeamModel {
public:
    virtual ~BeamModel() = default;
    /// Next-token logits of live hypothesis h (the empty hypothesis at the start).
    virtual std::span<const float> logits(std::size_t h) = 0;
    /// The new beam: live hypothesis i is old hypothesis parents[i] followed by tokens[i], in
    /// rank order. With `run`, computes their logits (else the search ends). Returns false
    /// when that was cancelled.
    virtual bool advance(std::span<const std::size_t> parents, std::span<const Token> tokens, bool run) = 0;
    virtual bool is_end_of_generation(Token t) const = 0;
};

struct RawHypothesis {
    std::vector<Token> tokens;  // without the end-of-generation token
    double logprob = 0.0;       // its log-probability included
    bool done = false;
};

struct BeamOutcome {
    /// Done hypotheses in the order they finished, then the live ones best first.
    std::vector<RawHypothesis> hypotheses;
    bool cancelled = false;
};

/// The search of ember/decoding.hpp over `model`: `beams` >= 1, `max_tokens` >= 1 steps.
BeamOutcome run_beam_search(BeamModel& model, std::size_t beams, int max_tokens);

}  // namespace ember::decoding

#include "decoding/beam_core.hpp"

namespace ember::decoding {

BeamOutcome run_beam_search(BeamModel& model, std::size_t beams, int max_tokens) {
    BeamOutcome out;
    std::vector<RawHypothesis> live(1), done;
    std::vector<Extension> row;
    std::vector<double> sums;
    std::vector<std::size_t> parents;
    std::vector<Token> tokens;
    for (int step = 0; step < max_tokens && !live.empty(); ++step) {
        sums.clear();
        for (const RawHypothesis& h : live) sums.push_back(h.logprob);
        const std::vector<Extension> chosen = select_beams(sums, [&](std::size_t h) { return model.logits(h); }, beams, row);
        std::vector<RawHypothesis> next;
        parents.clear();
        tokens.clear();
        for (const Extension& e : chosen) {
            const RawHypothesis& parent = live[static_cast<std::size_t>(e.hyp)];
            if (model.is_end_of_generation(e.token)) {  // done: it leaves the beam
                done.push_back({parent.tokens, e.logprob, true});
                continue;
            }
            next.push_back({parent.tokens, e.logprob, false});
            next.back().tokens.push_back(e.token);
            parents.push_back(static_cast<std::size_t>(e.hyp));
            tokens.push_back(e.token);
        }
        live = std::move(next);
        const bool run = !live.empty() && step + 1 < max_tokens;
        if (!model.advance(parents, tokens, run)) {
            out.cancelled = true;
            break;
        }
    }
    out.hypotheses = std::move(done);
    for (RawHypothesis& h : live) out.hypotheses.push_back(std::move(h));
    return out;
}

}  // namespace ember::decoding

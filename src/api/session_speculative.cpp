// Session::generate with speculative decoding. Each step:
//   1. the next token p: sampled from logits() (as plain generate does), or the replacement
//      token the last verification drew;
//   2. the proposer guesses up to k tokens after the session's tokens and p (k from the
//      adaptive draft length, the room left in the context and max_tokens);
//   3. ONE forward pass over [p, guesses] keeps every row's logits; row i checks guess i with
//      Sampler::sample_speculative, in order, emitting what is kept, until the first rejection
//      (whose replacement becomes the next p) or a stop;
//   4. the rows after the kept tokens are rolled back (their logits are kept: no pass).
// A step without guesses is a plain decode step (and does the context shift). A row's logits
// never depend on the rows sharing its pass, so the tokens are those of plain decoding.
#include <algorithm>

#include "api/generation.hpp"
#include "api/session_impl.hpp"
#include "api/speculator_impl.hpp"
#include "ember/sampler.hpp"
#include "runtime/fail.hpp"

namespace ember {
namespace {

// A seed for the draft sampler of one generate() call, independent of the target's draws.
std::uint64_t draft_seed(std::uint64_t target_seed, std::uint64_t call) {
    std::uint64_t z = target_seed ^ (0x9E3779B97F4A7C15ull * (call + 1)) ^ 0xD6E8FEB86659FD93ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace

GenerateResult Session::Impl::generate_speculative(Session& self, Sampler& sampler, Speculator& speculator,
                                                   detail::Generation& gen) {
    auto& sp = detail::SpeculatorAccess::impl(speculator);
    if (sp.target != model_impl) {
        fail("GenerateOptions::speculative: the Speculator was made for another model than this session's");
    }
    const tokenizer::Tokenizer& tok = *model_impl->tokenizer;
    const auto is_eog = [&tok](Token t) { return tok.is_end_of_generation(t); };
    speculative::ProposeRequest req;
    req.sampling = &sampler.options();
    req.seed = draft_seed(sampler.seed(), sp.generations++);
    req.n_ctx = n_ctx;
    req.threads = n_threads;
    req.batch = n_batch;
    req.cancel = cancel;
    req.ends = is_eog;

    Token pending = kNoToken;  // emitted, not yet in the session
    while (true) {
        Token p = pending;
        pending = kNoToken;
        if (p == kNoToken) {
            if (gen.remaining() == 0) return gen.finish(StopReason::max_tokens, Status::ok);
            if (n_past >= n_ctx && !can_shift()) return gen.finish(StopReason::context_full, Status::context_full);
            if (cancel && cancel()) return gen.finish(StopReason::cancelled, Status::cancelled);
            p = sampler.sample(logits);
            if (is_eog(p)) return gen.finish(StopReason::eog, Status::ok);
            if (const auto stop = gen.emit(p, logits)) {
                const Status status = self.decode(p);
                if (status == Status::cancelled) return gen.finish(StopReason::cancelled, Status::cancelled, true);
                return gen.finish(*stop, Status::ok);
            }
        }

        // Guess. The pass over [p, guesses] must fit in the context and in one batch, and
        // guesses past max_tokens would never be emitted.
        const auto t0 = SessionClock::now();
        const int k = std::min({sp.length.next(), n_ctx - n_past - 1, n_batch - 1, gen.remaining()});
        speculative::Proposal& prop = sp.proposal;
        prop.clear();
        if (k > 0) {
            sp.context.assign(tokens.begin(), tokens.end());
            sp.context.push_back(p);
            req.context = sp.context;
            req.max = k;
            if (sp.proposer->propose(req, prop) == Status::cancelled) {
                return gen.finish(StopReason::cancelled, Status::cancelled, true);
            }
        }
        if (prop.tokens.empty()) {
            const Status status = self.decode(p);
            if (status == Status::cancelled) return gen.finish(StopReason::cancelled, Status::cancelled, true);
            EMBER_ASSERT(status == Status::ok);  // room was checked when p was sampled
            continue;
        }

        // Verify in one pass. The last guess needs a row only if it could be kept and followed:
        // not for an end of generation or an id outside the vocabulary.
        const int n0 = n_past;
        const auto n_guess = static_cast<int>(prop.tokens.size());
        const Token last = prop.tokens.back();
        const bool last_row = valid_token(last) && !is_eog(last);
        sp.rows.assign(1, p);
        sp.rows.insert(sp.rows.end(), prop.tokens.begin(), prop.tokens.end() - (last_row ? 0 : 1));
        if (run_rows(sp.rows.data(), static_cast<int>(sp.rows.size()), /*all_logits=*/true) == Status::cancelled) {
            return gen.finish(StopReason::cancelled, Status::cancelled, true);
        }

        int accepted = 0, keep = n_past;
        bool rejected = false, eog = false;
        std::optional<StopReason> stop;
        for (int i = 0; i < n_guess && !rejected && !eog && !stop; ++i) {
            SampleCandidate point;
            const Token d = prop.tokens[static_cast<std::size_t>(i)];
            const auto row = scratch.logits(i);
            const SpeculativeSample v =
                sampler.sample_speculative(row, d, prop.distribution(static_cast<std::size_t>(i), point));
            keep = n0 + 1 + i;  // p and the guesses before this one
            if (v.accepted) ++accepted;
            else rejected = true;
            if (is_eog(v.token)) {
                eog = true;
                break;
            }
            // While a token is emitted, logits() are those it was drawn from (as in plain decoding).
            std::copy(row.begin(), row.end(), logits.begin());
            if (v.accepted) {
                stop = gen.emit(d, row);
                keep += 1;
            } else {
                stop = gen.emit(v.token, row);
                pending = v.token;
            }
        }
        // Keep p and what was emitted; logits() then predict what follows. The kept rows hold
        // those logits: no pass runs.
        const auto next = kept_logits(keep - 1);
        std::copy(next.begin(), next.end(), logits.begin());
        const Status rolled = rollback(keep);
        EMBER_ASSERT(rolled == Status::ok);

        sp.length.record(accepted, rejected);
        sp.stats.steps += 1;
        sp.stats.proposed += n_guess;
        sp.stats.accepted += accepted;
        metrics.speculative_steps += 1;
        metrics.draft_tokens += n_guess;
        metrics.accepted_tokens += accepted;
        metrics.generated_tokens += keep - n0;
        metrics.decode_seconds += seconds_since(t0);

        if (eog) return gen.finish(StopReason::eog, Status::ok);
        if (stop) {
            if (pending != kNoToken) {  // an emitted replacement goes into the session, as in plain decoding
                const Status status = self.decode(pending);
                if (status == Status::cancelled) return gen.finish(StopReason::cancelled, Status::cancelled, true);
            }
            return gen.finish(*stop, Status::ok);
        }
    }
}

}  // namespace ember

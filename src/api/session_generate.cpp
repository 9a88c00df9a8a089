// Session::generate: the sampling loop (detail::Generation, shared with the Engine and the
// speculative loop) over this session's forward passes.
#include "api/generation.hpp"
#include "api/session_impl.hpp"
#include "ember/sampler.hpp"
#include "runtime/fail.hpp"

namespace ember {

GenerateResult Session::generate(Sampler& sampler, const GenerateOptions& options) {
    Impl& s = *impl_;
    if (!s.has_logits) fail("Session::generate: no logits yet; prefill a prompt first");
    detail::Generation gen(options, *s.model_impl->tokenizer, *s.stream);
    if (options.speculative != nullptr) return s.generate_speculative(*this, sampler, *options.speculative, gen);

    for (;;) {
        if (gen.at_limit()) return gen.finish(StopReason::max_tokens, Status::ok);
        if (s.n_past >= s.n_ctx && !s.can_shift()) {
            return gen.finish(StopReason::context_full, Status::context_full);
        }
        if (s.cancel && s.cancel()) return gen.finish(StopReason::cancelled, Status::cancelled);

        const detail::Generation::Step step = gen.next(sampler, logits());
        if (step.eog) return gen.finish(StopReason::eog, Status::ok);
        // Every emitted token goes into the session so that it can be continued.
        const Status status = decode(step.token);
        if (status == Status::cancelled) return gen.finish(StopReason::cancelled, Status::cancelled, true);
        EMBER_ASSERT(status == Status::ok);  // room and token validity were checked above
        if (step.stop_found) return gen.finish(StopReason::stop_string, Status::ok);
        if (!step.go_on) return gen.finish(StopReason::cancelled, Status::ok);
    }
}

}  // namespace ember

// Session::generate: the sampling loop with stop strings, streaming text and stop reasons.
#include "api/session_impl.hpp"
#include "api/stop_strings.hpp"
#include "ember/sampler.hpp"
#include "runtime/fail.hpp"

namespace ember {

GenerateResult Session::generate(Sampler& sampler, const GenerateOptions& options) {
    Impl& s = *impl_;
    if (!s.has_logits) fail("Session::generate: no logits yet; prefill a prompt first");
    GenerateResult result;
    detail::StopStrings stops(options.stop);

    // Emits text through on_token; false when the callback asked to stop.
    auto emit = [&](Token token, std::string_view text) {
        result.text.append(text);
        return options.on_token ? options.on_token(token, text) : true;
    };
    auto finish = [&](StopReason reason, Status status) {
        result.stop_reason = reason;
        result.status = status;
        // Held-back text goes out unless a stop string was found or on_token asked to stop.
        const bool by_on_token = reason == StopReason::cancelled && status == Status::ok;
        if (reason != StopReason::stop_string && !by_on_token) {
            const std::string_view rest = stops.finish();
            if (!rest.empty()) emit(kNoToken, rest);
        }
        return std::move(result);
    };

    for (int i = 0;; ++i) {
        if (options.max_tokens >= 0 && i >= options.max_tokens) {
            return finish(StopReason::max_tokens, Status::ok);
        }
        if (s.n_past >= s.n_ctx && !s.can_shift()) {
            return finish(StopReason::context_full, Status::context_full);
        }
        if (s.cancel && s.cancel()) return finish(StopReason::cancelled, Status::cancelled);

        const Token token = sampler.sample(logits());
        if (s.model_impl->tokenizer->is_end_of_generation(token)) {
            return finish(StopReason::eog, Status::ok);
        }
        result.tokens.push_back(token);
        const std::string piece = s.stream->push(token);
        const detail::StopStrings::Step step = stops.push(piece);
        const bool last = options.max_tokens >= 0 && i + 1 >= options.max_tokens;
        std::string_view out = step.released;
        std::string joined;
        if (last && step.matched < 0) {  // release what is held back with the last token
            joined.assign(out);
            joined.append(stops.finish());
            out = joined;
        }
        const bool go_on = emit(token, out);

        // Every emitted token goes into the session so that it can be continued.
        const Status status = decode(token);
        if (status == Status::cancelled) {
            result.last_token_pending = true;
            return finish(StopReason::cancelled, Status::cancelled);
        }
        EMBER_ASSERT(status == Status::ok);  // room and token validity were checked above
        if (step.matched >= 0) {
            result.stop_string = options.stop[static_cast<std::size_t>(step.matched)];
            return finish(StopReason::stop_string, Status::ok);
        }
        if (!go_on) return finish(StopReason::cancelled, Status::ok);
    }
}

}  // namespace ember

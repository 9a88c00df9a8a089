#include "api/generation.hpp"

#include <algorithm>
#include <climits>
#include <string>

#include "ember/sampler.hpp"
#include "runtime/fail.hpp"

namespace ember::detail {

Generation::Generation(const GenerateOptions& options, const tokenizer::Tokenizer& tokenizer,
                       tokenizer::StreamDecoder& stream)
    : options_(options), tokenizer_(tokenizer), stream_(stream), stops_(options.stop) {
    if (options.top_logprobs < 0) fail("GenerateOptions::top_logprobs must be >= 0");
}

int Generation::remaining() const noexcept {
    if (options_.max_tokens < 0) return INT_MAX;
    return std::max(options_.max_tokens - static_cast<int>(result_.tokens.size()), 0);
}

bool Generation::emit_text(Token token, std::string_view text) {
    result_.text.append(text);
    return options_.on_token ? options_.on_token(token, text) : true;
}

Generation::Emitted Generation::emit_token(Token token, std::span<const float> logits) {
    result_.tokens.push_back(token);
    if (options_.logprobs) {
        result_.logprobs.push_back(ember::logprobs(logits, token, options_.top_logprobs));
        if (options_.on_logprobs) options_.on_logprobs(result_.logprobs.back());
    }
    const std::string piece = stream_.push(token);
    const StopStrings::Step stop = stops_.push(piece);
    std::string_view out = stop.released;
    std::string joined;
    if (at_limit() && stop.matched < 0) {  // release what is held back with the last token
        joined.assign(out);
        joined.append(stops_.finish());
        out = joined;
    }
    if (stop.matched >= 0) result_.stop_string = options_.stop[static_cast<std::size_t>(stop.matched)];
    return {stop.matched >= 0, emit_text(token, out)};
}

Generation::Step Generation::next(Sampler& sampler, std::span<const float> logits) {
    Step step;
    const Token token = sampler.sample(logits);
    if (tokenizer_.is_end_of_generation(token)) {
        step.eog = true;
        return step;
    }
    step.token = token;
    const Emitted e = emit_token(token, logits);
    step.stop_found = e.stop_found;
    step.go_on = e.go_on;
    return step;
}

std::optional<StopReason> Generation::emit(Token token, std::span<const float> logits) {
    const Emitted e = emit_token(token, logits);
    if (e.stop_found) return StopReason::stop_string;
    if (!e.go_on) return StopReason::cancelled;
    if (at_limit()) return StopReason::max_tokens;
    return std::nullopt;
}

GenerateResult Generation::finish(StopReason reason, Status status, bool pending) {
    result_.stop_reason = reason;
    result_.status = status;
    if (pending) result_.last_token_pending = true;
    if (reason != StopReason::stop_string) result_.stop_string.clear();
    // Held-back text goes out unless a stop string was found, on_token asked to stop, or the
    // generation failed (on_token may be what threw).
    const bool by_on_token = reason == StopReason::cancelled && status == Status::ok;
    if (reason != StopReason::stop_string && reason != StopReason::error && !by_on_token) {
        const std::string_view rest = stops_.finish();
        if (!rest.empty()) emit_text(kNoToken, rest);
    }
    return std::move(result_);
}

}  // namespace ember::detail

#include "api/generation.hpp"

#include <string>

#include "ember/sampler.hpp"

namespace ember::detail {

Generation::Generation(const GenerateOptions& options, const tokenizer::Tokenizer& tokenizer,
                       tokenizer::StreamDecoder& stream)
    : options_(options), tokenizer_(tokenizer), stream_(stream), stops_(options.stop) {}

bool Generation::at_limit() const noexcept {
    return options_.max_tokens >= 0 &&
           result_.tokens.size() >= static_cast<std::size_t>(options_.max_tokens);
}

bool Generation::emit(Token token, std::string_view text) {
    result_.text.append(text);
    return options_.on_token ? options_.on_token(token, text) : true;
}

Generation::Step Generation::next(Sampler& sampler, std::span<const float> logits) {
    Step step;
    const Token token = sampler.sample(logits);
    if (tokenizer_.is_end_of_generation(token)) {
        step.eog = true;
        return step;
    }
    step.token = token;
    result_.tokens.push_back(token);
    const std::string piece = stream_.push(token);
    const StopStrings::Step stop = stops_.push(piece);
    std::string_view out = stop.released;
    std::string joined;
    if (at_limit() && stop.matched < 0) {  // release what is held back with the last token
        joined.assign(out);
        joined.append(stops_.finish());
        out = joined;
    }
    if (stop.matched >= 0) {
        step.stop_found = true;
        matched_ = stop.matched;
    }
    step.go_on = emit(token, out);
    return step;
}

GenerateResult Generation::finish(StopReason reason, Status status) {
    result_.stop_reason = reason;
    result_.status = status;
    if (reason == StopReason::stop_string && matched_ >= 0) {
        result_.stop_string = options_.stop[static_cast<std::size_t>(matched_)];
    }
    // Held-back text goes out unless a stop string was found, on_token asked to stop, or the
    // generation failed (on_token may be what threw).
    const bool by_on_token = reason == StopReason::cancelled && status == Status::ok;
    if (reason != StopReason::stop_string && reason != StopReason::error && !by_on_token) {
        const std::string_view rest = stops_.finish();
        if (!rest.empty()) emit(kNoToken, rest);
    }
    return std::move(result_);
}

}  // namespace ember::detail

// One generation's bookkeeping, shared by Session::generate (plain and speculative) and the
// Engine: sampling the next token, the end-of-generation check, its text through the UTF-8
// stream and the stop strings to on_token, and the result with its stop reason. The caller owns
// the forward passes: it feeds each emitted token back before asking for the next.
#pragma once

#include <optional>
#include <span>

#include "api/stop_strings.hpp"
#include "ember/session.hpp"
#include "tokenizer/tokenizer.hpp"

namespace ember::detail {

class Generation {
public:
    /// `options` and `stream` must outlive the Generation. Throws ember::Error for a negative
    /// GenerateOptions::top_logprobs.
    Generation(const GenerateOptions& options, const tokenizer::Tokenizer& tokenizer,
               tokenizer::StreamDecoder& stream);

    /// Whether GenerateOptions::max_tokens tokens were emitted.
    bool at_limit() const noexcept { return remaining() == 0; }
    /// Tokens that may still be emitted (INT_MAX without max_tokens).
    int remaining() const noexcept;

    struct Step {
        bool eog = false;   ///< The sampler picked an end-of-generation token (not emitted).
        Token token = kNoToken;  ///< The token emitted (unless eog): feed it back to continue.
        bool stop_found = false;  ///< Its text completed a stop string: finish(stop_string).
        bool go_on = true;  ///< on_token's answer (false: finish(cancelled, ok)).
    };
    /// Samples the next token from `logits` and emits its text. Passes on the exceptions of
    /// the sampler and of on_token.
    Step next(Sampler& sampler, std::span<const float> logits);

    /// Emits a token chosen elsewhere (speculative decoding) from `logits` that the session
    /// keeps: its text goes through the stream and the stop strings to on_token. Returns why generation ends
    /// after this token (stop_string, cancelled by on_token, max_tokens; in that order), or
    /// nothing.
    std::optional<StopReason> emit(Token token, std::span<const float> logits);

    /// Ends the generation: records the reason and status, releases the text still held back
    /// unless a stop string ended it, on_token asked to stop or it failed, and hands over the
    /// result. `pending`: the last token was emitted but the session does not hold it.
    GenerateResult finish(StopReason reason, Status status, bool pending = false);
    /// The result so far.
    GenerateResult& result() noexcept { return result_; }

private:
    struct Emitted {
        bool stop_found;
        bool go_on;
    };
    Emitted emit_token(Token token, std::span<const float> logits);
    bool emit_text(Token token, std::string_view text);

    const GenerateOptions& options_;
    const tokenizer::Tokenizer& tokenizer_;
    tokenizer::StreamDecoder& stream_;
    StopStrings stops_;
    GenerateResult result_;
};

}  // namespace ember::detail

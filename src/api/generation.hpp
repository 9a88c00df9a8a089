// One generation's bookkeeping, shared by Session::generate and the Engine: sampling the next
// token, the end-of-generation check, its text through the UTF-8 stream and the stop strings to
// on_token, and the result with its stop reason. The caller owns the forward passes: it feeds
// each emitted token back before asking for the next.
#pragma once

#include <span>

#include "api/stop_strings.hpp"
#include "ember/session.hpp"
#include "tokenizer/tokenizer.hpp"

namespace ember::detail {

class Generation {
public:
    /// `options` and `stream` must outlive the Generation.
    Generation(const GenerateOptions& options, const tokenizer::Tokenizer& tokenizer,
               tokenizer::StreamDecoder& stream);

    /// Whether GenerateOptions::max_tokens tokens were emitted.
    bool at_limit() const noexcept;

    struct Step {
        bool eog = false;   ///< The sampler picked an end-of-generation token (not emitted).
        Token token = kNoToken;  ///< The token emitted (unless eog): feed it back to continue.
        bool stop_found = false;  ///< Its text completed a stop string: finish(stop_string).
        bool go_on = true;  ///< on_token's answer (false: finish(cancelled, ok)).
    };
    /// Samples the next token from `logits` and emits its text. Passes on the exceptions of
    /// the sampler and of on_token.
    Step next(Sampler& sampler, std::span<const float> logits);

    /// Ends the generation: records the reason and status, releases the text still held back
    /// unless a stop string ended it or on_token asked to stop, and hands over the result.
    GenerateResult finish(StopReason reason, Status status);
    /// The result so far (for GenerateResult::last_token_pending and the like).
    GenerateResult& result() noexcept { return result_; }

private:
    bool emit(Token token, std::string_view text);

    const GenerateOptions& options_;
    const tokenizer::Tokenizer& tokenizer_;
    tokenizer::StreamDecoder& stream_;
    StopStrings stops_;
    int matched_ = -1;  // index into options_.stop of the stop string found
    GenerateResult result_;
};

}  // namespace ember::detail

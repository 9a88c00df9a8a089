// OpenAI request bodies (POST /v1/chat/completions, /v1/completions) to ember's terms, with
// every field checked: a bad field is a RequestError naming the field and what was wrong, which
// the server answers with 400 and OpenAI's error JSON. Needs no model: the vocabulary size and
// the server's caps come in Limits.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ember/model.hpp"
#include "ember/sampler.hpp"
#include "ember/types.hpp"

namespace ember_server {

/// A request the server refuses: HTTP status, message, the field at fault ("" when none).
class RequestError : public std::runtime_error {
public:
    RequestError(int status, const std::string& message, std::string param = {},
                 std::string type = "invalid_request_error")
        : std::runtime_error(message), status_(status), param_(std::move(param)), type_(std::move(type)) {}
    int status() const noexcept { return status_; }
    const std::string& param() const noexcept { return param_; }
    const std::string& type() const noexcept { return type_; }

private:
    int status_;
    std::string param_;
    std::string type_;
};

struct Limits {
    std::int64_t n_vocab = 0;  ///< token ids (prompt arrays, logit_bias keys) must be below this
    int max_tokens = 4096;     ///< cap of max_tokens, and its default
};

/// A parsed completion request (chat or text).
struct CompletionRequest {
    bool chat = false;
    std::vector<ember::ChatMessage> messages;  ///< chat
    std::string prompt;                        ///< text completion: the prompt as text, or
    std::vector<ember::Token> prompt_tokens;   ///< as token ids (when not empty)
    std::string model;                         ///< the model id the client named ("" if none)
    int max_tokens = 0;                        ///< resolved: the request's or Limits::max_tokens
    ember::SamplerOptions sampler;             ///< OpenAI's defaults: temperature 1, no filters
    std::vector<std::string> stop;
    int n = 1;        ///< choices to return
    int best_of = 1;  ///< text completions: candidates generated, the n best returned (>= n)
    bool stream = false;
    bool include_usage = false;                ///< stream_options.include_usage
    bool logprobs = false;
    int top_logprobs = 0;
    std::string json_schema;                   ///< response_format json_object / json_schema
    // Tools (chat): the request's `tools` array as JSON text ("" when none), what tool_choice
    // asks ("none", "auto", "required", or "function" for tool_function), parallel_tool_calls.
    std::string tools;
    std::string tool_choice = "none";
    std::string tool_function;
    bool parallel_tool_calls = true;
};

/// Parses and checks a request body. Throws RequestError (status 400) for malformed JSON, a
/// field of the wrong type or out of range, and features not supported yet (echo, ...).
CompletionRequest parse_completion_request(std::string_view body, bool chat, const Limits& limits);

}  // namespace ember_server

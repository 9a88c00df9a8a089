// OpenAI response bodies: errors, chat.completion / text_completion objects, and the
// server-sent events of a stream (chat.completion.chunk / text_completion chunks).
// Text that is not valid UTF-8 (a token's piece may be part of a character) is written with
// U+FFFD in its place, never an exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/model.hpp"

namespace ember_server {

/// {"error": {"message", "type", "param", "code"}}; `param` null when empty.
std::string error_json(const std::string& message, const std::string& type = "invalid_request_error",
                       const std::string& param = {}, const std::string& code = {});

/// What every object of one response shares.
struct ResponseMeta {
    std::string id;       ///< "chatcmpl-..." / "cmpl-..."
    std::int64_t created = 0;
    std::string model;
    bool chat = true;
    std::size_t choice = 0;  ///< stream chunks: the index of the choice they carry (n > 1)
};

struct Usage {
    std::int64_t prompt_tokens = 0;
    std::int64_t completion_tokens = 0;
    std::int64_t cached_tokens = 0;  ///< prompt tokens the prefix cache gave
};

/// One generated token's log-probability, with its text and the most likely alternatives.
struct LogprobEntry {
    std::string token;
    float logprob = 0.0f;
    std::vector<std::pair<std::string, float>> top;
};

struct Completion {
    std::string text;
    std::string finish_reason;  ///< "stop", "length" or "tool_calls"
    Usage usage;
    std::optional<std::vector<LogprobEntry>> logprobs;  ///< when the request asked for them
    /// chat: message.tool_calls; with calls an empty `text` is "content": null, as OpenAI has it.
    std::vector<ember::ToolCall> tool_calls = {};
};

/// The whole answer: a chat.completion or a text_completion object with `choices` (index 0, 1,
/// ... in their order) and `usage` (each Completion's own usage is not read).
std::string completion_json(const ResponseMeta& meta, const std::vector<Completion>& choices, const Usage& usage);
/// One choice, with its usage.
inline std::string completion_json(const ResponseMeta& meta, const Completion& c) {
    return completion_json(meta, std::vector<Completion>{c}, c.usage);
}

/// The log-probabilities a stream chunk carries: the tokens sampled since the previous chunk,
/// and (text completions) the offset of the first one's text in the whole answer.
struct ChunkLogprobs {
    const std::vector<LogprobEntry>* entries = nullptr;
    std::size_t text_offset = 0;
};

/// "data: JSON\n\n" for one chunk of a stream; `text` is the delta (chat: content; the first
/// chat chunk also carries "role": "assistant"), `finish_reason` null when empty. With
/// include_usage every chunk has "usage": null. `logprobs.entries` null: "logprobs": null.
std::string stream_chunk(const ResponseMeta& meta, const std::string& text, const std::string& finish_reason,
                         bool first, bool include_usage, ChunkLogprobs logprobs = {});
/// A chunk whose delta carries tool calls: "tool_calls": [{"index", "id", "type": "function",
/// "function": {"name", "arguments"}}], each call whole, `first_index` the index of the first.
std::string stream_tool_calls_chunk(const ResponseMeta& meta, const std::vector<ember::ToolCall>& calls,
                                    std::size_t first_index, bool include_usage);
/// The last chunk before [DONE] with stream_options.include_usage: no choices, the usage.
std::string stream_usage_chunk(const ResponseMeta& meta, const Usage& usage);
/// An error inside a stream (the status line has gone already): "data: {"error": ...}\n\n".
std::string stream_error(const std::string& message, const std::string& type);
/// "data: [DONE]\n\n".
std::string stream_done();

/// "[0, 255]" bytes of a token's text, for logprobs' "bytes" field.
std::vector<int> utf8_bytes(const std::string& text);

}  // namespace ember_server

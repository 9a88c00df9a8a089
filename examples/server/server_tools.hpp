// The server's side of tool calls (docs/server.md, "Tools"): the format of the template in use,
// the grammar that forces a call, and the calls split out of a reply, whole or streamed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "ember/tool_calls.hpp"
#include "openai_request.hpp"
#include "openai_response.hpp"

namespace ember_server {

/// The tool-call format of the template the server renders with: `template_override` (from
/// --chat-template) when set, else the model's.
ember::ToolCallFormat tool_format(const ember::Model& model, const std::string& template_override);

/// True when the reply is to be searched for calls: tools given and tool_choice not "none".
bool wants_tool_calls(const CompletionRequest& r);

/// The GBNF grammar that makes the reply a call (tool_choice "required" or a function), or ""
/// when the reply is free. Throws RequestError 400 naming "tools" for a schema the grammar
/// converter refuses.
std::string tool_grammar(const CompletionRequest& r, ember::ToolCallFormat format);

/// A whole reply: c.text becomes the content and c.tool_calls the calls found in it;
/// finish_reason "stop" becomes "tool_calls" when there are any ("length" stays: the reply was
/// cut, and a call cut short is left in the content). Nothing changes when there are none.
void split_tool_calls(ember::ToolCallFormat format, Completion& c);

/// A streamed reply: text is sent as it comes except what may be a call, which is held until
/// the end; then the calls go out as one tool_calls delta, or the held text as content.
class ToolStream {
public:
    explicit ToolStream(ember::ToolCallFormat format) : format_(format) {}
    /// Takes the next piece of the reply; returns the content that may be sent now.
    std::string feed(std::string_view text);
    /// At the end of the reply: the chunks that finish it (held content, or the calls);
    /// `finish_reason` "stop" becomes "tool_calls" when there are calls.
    std::string finish(const ResponseMeta& meta, std::string& finish_reason, bool include_usage);

private:
    ember::ToolCallFormat format_;
    std::string reply_;     // all the text so far
    std::size_t sent_ = 0;  // bytes of it sent as content
};

}  // namespace ember_server

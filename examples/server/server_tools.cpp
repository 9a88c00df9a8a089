#include "server_tools.hpp"

#include <algorithm>

#include "ember/error.hpp"

namespace ember_server {

ember::ToolCallFormat tool_format(const ember::Model& model, const std::string& template_override) {
    return ember::detect_tool_call_format(template_override.empty() ? model.chat_template() : template_override);
}

bool wants_tool_calls(const CompletionRequest& r) { return !r.tools.empty() && r.tool_choice != "none"; }

std::string tool_grammar(const CompletionRequest& r, ember::ToolCallFormat format) {
    if (r.tools.empty() || (r.tool_choice != "required" && r.tool_choice != "function")) return {};
    try {
        return ember::tool_call_grammar(r.tools, format, {.function = r.tool_function, .parallel = r.parallel_tool_calls});
    } catch (const ember::Error& e) {
        throw RequestError(400, std::string("cannot force a tool call: ") + e.what(), "tools");
    }
}

void split_tool_calls(ember::ToolCallFormat format, Completion& c) {
    ember::ParsedReply reply = ember::parse_tool_calls(c.text, format);
    if (reply.tool_calls.empty()) return;
    c.text = std::move(reply.content);
    c.tool_calls = std::move(reply.tool_calls);
    if (c.finish_reason == "stop") c.finish_reason = "tool_calls";  // "length" stays: the reply was cut
}

std::string ToolStream::feed(std::string_view text) {
    reply_.append(text);
    const std::size_t free = std::max(sent_, ember::tool_call_free_prefix(reply_, format_));
    std::string out = reply_.substr(sent_, free - sent_);
    sent_ = free;
    return out;
}

std::string ToolStream::finish(const ResponseMeta& meta, std::string& finish_reason, bool include_usage) {
    if (sent_ == reply_.size()) return {};
    ember::ParsedReply reply = ember::parse_tool_calls(reply_, format_);
    if (reply.tool_calls.empty()) {
        std::string rest = reply_.substr(sent_);
        sent_ = reply_.size();
        return stream_chunk(meta, rest, "", false, include_usage);
    }
    sent_ = reply_.size();
    if (finish_reason == "stop") finish_reason = "tool_calls";
    return stream_tool_calls_chunk(meta, reply.tool_calls, 0, include_usage);
}

}  // namespace ember_server

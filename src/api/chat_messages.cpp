#include "api/chat_messages.hpp"

#include "runtime/fail.hpp"

namespace ember::detail {
namespace {

// OpenAI carries arguments as JSON text; Hugging Face templates expect the value (they apply
// tojson to it). Text that is not JSON stays a string.
json::Value tool_arguments(const std::string& text) {
    try {
        return json::parse(text);
    } catch (const Error&) {
        return json::Value(text);
    }
}

json::Value message_json(const ChatMessage& msg) {
    json::Value m = chat::make_message(msg.role, msg.content);
    if (!msg.tool_calls.empty()) {
        json::Value calls = json::Value::array();
        for (const ToolCall& call : msg.tool_calls) {
            json::Value function = json::Value::object();
            function["name"] = json::Value(call.name);
            function["arguments"] = tool_arguments(call.arguments);
            json::Value c = json::Value::object();
            if (!call.id.empty()) c["id"] = json::Value(call.id);
            c["type"] = json::Value("function");
            c["function"] = std::move(function);
            calls.push_back(std::move(c));
        }
        m["tool_calls"] = std::move(calls);
    }
    if (!msg.tool_call_id.empty()) m["tool_call_id"] = json::Value(msg.tool_call_id);
    if (!msg.name.empty()) m["name"] = json::Value(msg.name);
    if (!msg.reasoning_content.empty()) m["reasoning_content"] = json::Value(msg.reasoning_content);
    return m;
}

json::Value parse_option(const std::string& text, const char* option) {
    try {
        return json::parse(text);
    } catch (const Error& e) {
        fail(std::string("ChatTemplateOptions::") + option + ": " + e.what());
    }
}

}  // namespace

chat::ChatTemplateInput chat_template_input(const std::vector<ChatMessage>& messages,
                                            const ChatTemplateOptions& options) {
    chat::ChatTemplateInput input;
    for (const ChatMessage& msg : messages) input.messages.push_back(message_json(msg));
    input.add_generation_prompt = options.add_generation_prompt;
    if (!options.variables.empty()) {
        input.extra = parse_option(options.variables, "variables");
        if (!input.extra.is_object()) fail("ChatTemplateOptions::variables must be a JSON object");
    }
    if (!options.tools.empty()) {
        json::Value tools = parse_option(options.tools, "tools");
        if (!tools.is_array()) fail("ChatTemplateOptions::tools must be a JSON array");
        input.extra["tools"] = std::move(tools);
    }
    return input;
}

}  // namespace ember::detail

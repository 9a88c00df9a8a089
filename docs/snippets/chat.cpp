// docs/chat-templates.md: a conversation laid out with the model's chat template.
#include <string>
#include <vector>

#include <ember/ember.hpp>

std::string chat_example(const ember::Model& model) {
    // [snippet:chat]
    std::vector<ember::ChatMessage> messages = {
        {.role = "system", .content = "You are a helpful assistant."},
        {.role = "user", .content = "Hello!"},
    };
    // The model's own template (ChatML when the file has none), ending with the opening of the
    // assistant's turn; throws ember::Error for a template error.
    std::string prompt = model.apply_chat_template(messages, /*add_generation_prompt=*/true);
    std::vector<ember::Token> ids = model.tokenize(prompt, {.add_bos = false, .parse_special = true});
    // [snippet:chat]
    return prompt + std::to_string(ids.size());
}

std::string chat_tools_example(const ember::Model& model) {
    // [snippet:tools]
    ember::ChatTemplateOptions options;
    options.tools = R"([{"type": "function", "function": {"name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])";
    options.variables = R"({"enable_thinking": false})";  // any further template variable
    std::vector<ember::ChatMessage> messages = {
        {.role = "user", .content = "Weather in Paris?"},
        {.role = "assistant", .tool_calls = {{.id = "call_1", .name = "get_weather", .arguments = R"({"city": "Paris"})"}}},
        {.role = "tool", .content = R"({"temperature": 18})", .tool_call_id = "call_1", .name = "get_weather"},
    };
    std::string prompt = model.apply_chat_template(messages, options);  // ends with the assistant's turn
    // [snippet:tools]
    return prompt;
}

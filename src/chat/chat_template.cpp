#include "chat/chat_template.hpp"

#include <ctime>

#include "chat/jinja_interpreter.hpp"
#include "chat/jinja_parser.hpp"
#include "runtime/fail.hpp"

namespace ember::chat {

const char* const kDefaultChatMlTemplate =
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

ChatTemplate::ChatTemplate(std::string_view source, jinja::RenderLimits limits)
    : source_(source), limits_(limits) {
    jinja::LexerOptions options;  // trim_blocks, lstrip_blocks, no trailing newline: as HF
    template_ = std::make_shared<const jinja::Template>(jinja::parse(source_, options));
}

std::string ChatTemplate::render(const ChatTemplateInput& input) const {
    if (!input.messages.is_array()) fail("chat template: messages must be a JSON array");
    if (!input.extra.is_object() && !input.extra.is_null()) fail("chat template: extra variables must be a JSON object");

    std::vector<std::pair<std::string, jinja::Value>> context;
    if (input.extra.is_object())
        for (const auto& item : input.extra.items()) context.emplace_back(item.key(), jinja::from_json(item.value()));
    context.emplace_back("messages", jinja::from_json(input.messages));
    context.emplace_back("add_generation_prompt", jinja::Value(input.add_generation_prompt));
    context.emplace_back("bos_token", jinja::Value(input.bos_token));
    context.emplace_back("eos_token", jinja::Value(input.eos_token));

    jinja::RenderOptions options;
    options.limits = limits_;
    if (input.fixed_date) {
        std::string text = *input.fixed_date;
        options.strftime_now = [text](const std::string&) { return text; };
    } else if (input.now) {
        std::time_t t = std::chrono::system_clock::to_time_t(*input.now);
        options.strftime_now = [t](const std::string& format) {
            std::tm tm{};
            localtime_r(&t, &tm);
            char buf[256];
            std::size_t n = std::strftime(buf, sizeof(buf), format.c_str(), &tm);
            return std::string(buf, n);
        };
    }
    return jinja::render(*template_, context, options);
}

json::Value make_message(std::string_view role, std::string_view content) {
    json::Value m = json::Value::object();
    m["role"] = std::string(role);
    m["content"] = std::string(content);
    return m;
}

std::string render_chat_template(std::string_view source, const ChatTemplateInput& input) {
    return ChatTemplate(source).render(input);
}

}  // namespace ember::chat

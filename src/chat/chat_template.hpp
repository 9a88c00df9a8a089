// Chat templates: renders a conversation with a model's Hugging Face Jinja chat template the
// way transformers' apply_chat_template does (trim_blocks, lstrip_blocks, loop controls,
// raise_exception, strftime_now, json.dumps-style tojson).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "chat/jinja_ops.hpp"
#include "chat/json.hpp"
#include "ember/error.hpp"

namespace ember::jinja {
struct Template;
}

namespace ember::chat {

/// What a template is rendered with.
struct ChatTemplateInput {
    /// The conversation: an array of objects with "role" and "content" and any extra fields
    /// (tool_calls, tool_call_id, name, ...), passed to the template unchanged.
    json::Value messages = json::Value::array();
    bool add_generation_prompt = false;
    std::string bos_token;
    std::string eos_token;
    /// More template variables (tools, documents, enable_thinking, date_string, ...). The four
    /// names above always come from their fields.
    json::Value extra = json::Value::object();
    /// When set, strftime_now(fmt) returns this text verbatim (tests, reproducible prompts).
    std::optional<std::string> fixed_date;
    /// When set (and fixed_date is not), strftime_now formats this time instead of the clock.
    std::optional<std::chrono::system_clock::time_point> now;
};

/// A parsed chat template. Immutable; render() may be called from many threads at once.
class ChatTemplate {
public:
    /// Parses `source`. Throws ember::Error "chat template: line L, column C: ..." on a syntax error.
    explicit ChatTemplate(std::string_view source, jinja::RenderLimits limits = {});

    /// Renders the template. Throws ember::Error: the template's own message for
    /// raise_exception(msg), "chat template: line L, column C: ..." for other runtime errors.
    std::string render(const ChatTemplateInput& input) const;

    const std::string& source() const noexcept { return source_; }

private:
    std::string source_;
    std::shared_ptr<const jinja::Template> template_;
    jinja::RenderLimits limits_;
};

/// One {"role": role, "content": content} message.
json::Value make_message(std::string_view role, std::string_view content);

/// Parses and renders in one call.
std::string render_chat_template(std::string_view source, const ChatTemplateInput& input);

/// ChatML (<|im_start|>role\ncontent<|im_end|>\n), transformers' old default, for models
/// whose GGUF file has no tokenizer.chat_template.
extern const char* const kDefaultChatMlTemplate;

}  // namespace ember::chat

// The public chat types (ember::ChatMessage, ChatTemplateOptions) as the template input the
// Jinja renderer takes: messages as transformers passes them, tools and variables parsed.
#pragma once

#include <vector>

#include "chat/chat_template.hpp"
#include "ember/model.hpp"

namespace ember::detail {

/// Messages, add_generation_prompt, tools and variables; bos/eos tokens are the caller's.
/// Throws ember::Error when tools is not a JSON array or variables not a JSON object.
chat::ChatTemplateInput chat_template_input(const std::vector<ChatMessage>& messages,
                                            const ChatTemplateOptions& options);

}  // namespace ember::detail

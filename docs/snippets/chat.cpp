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

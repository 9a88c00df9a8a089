// A GGUF file's Jinja chat template, parsed and rendered with a short conversation.
#include "chat/chat_template.hpp"
#include "ember/error.hpp"
#include "fuzz_target.hpp"

EMBER_FUZZ_TARGET(chat_template) {
    try {
        const ember::chat::ChatTemplate tmpl(ember_fuzz::as_text(data, size));
        ember::chat::ChatTemplateInput input;
        input.messages.push_back(ember::chat::make_message("system", "Be brief."));
        input.messages.push_back(ember::chat::make_message("user", "Hello"));
        input.messages.push_back(ember::chat::make_message("assistant", "Hi."));
        input.add_generation_prompt = true;
        input.bos_token = "<s>";
        input.eos_token = "</s>";
        input.fixed_date = "01 Jan 2026";
        (void)tmpl.render(input);
    } catch (const ember::Error&) {
    }
}

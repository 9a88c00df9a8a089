// docs/sessions.md: a session with context shift, generating with stop strings.
#include <iostream>
#include <string_view>

#include <ember/ember.hpp>

void sessions_example() {
    // [snippet:generate]
    ember::Model model = ember::Model::load("model.gguf");
    ember::SessionOptions so;
    so.context = 2048;
    so.context_shift = true;   // shift instead of stopping when the context is full
    so.n_keep = 1;             // never drop the BOS token
    ember::Session session(model, so);
    ember::Sampler sampler({.temperature = 0.8f, .seed = 42});

    auto prompt = model.tokenize("Once upon a time");
    for (ember::Token t : prompt) sampler.accept(t);     // optional: penalties see the prompt
    session.prefill(prompt);

    ember::GenerateOptions go;
    go.max_tokens = 256;
    go.stop = {"\n\n", "User:"};
    go.on_token = [](ember::Token, std::string_view text) { std::cout << text << std::flush; return true; };
    ember::GenerateResult r = session.generate(sampler, go);
    // r.text, r.tokens, r.stop_reason (eog, stop_string, max_tokens, context_full, cancelled), r.status
    // [snippet:generate]
    (void)r;
}

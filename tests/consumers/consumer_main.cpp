// A consumer of ember::ember: greedy continuation of a prompt (model path in argv[1]).
#include <iostream>

#include <ember/ember.hpp>

int main(int argc, char** argv) {
    std::cout << "ember " << ember::kVersion << '\n';
    if (argc < 2) return 0;
    try {
        auto model = ember::Model::load(argv[1], {.threads = 1});
        ember::Session session(model, {.context = 64});
        ember::Sampler sampler({.temperature = 0.0f});
        session.prefill(model.tokenize("Once upon a time"));
        std::string text;
        for (int i = 0; i < 8; ++i) {
            const ember::Token t = sampler.sample(session.logits());
            text += session.detokenize_stream(t);
            if (session.decode(t) != ember::Status::ok) break;
        }
        std::cout << "Once upon a time" << text << '\n';
    } catch (const ember::Error& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}

// Continues a prompt greedily:  app MODEL.gguf
#include <iostream>

#include <ember/ember.hpp>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: app MODEL.gguf\n";
        return 2;
    }
    try {
        auto model = ember::Model::load(argv[1], {.threads = 2});    // throws ember::Error
        ember::Session session(model, {.context = 2048});            // KV cache + scratch
        ember::Sampler sampler({.temperature = 0.0f});               // greedy

        std::cout << "Once upon a time";
        session.prefill(model.tokenize("Once upon a time"));
        for (int i = 0; i < 32; ++i) {
            ember::Token t = sampler.sample(session.logits());
            if (model.is_end_of_generation(t)) break;
            std::cout << session.detokenize_stream(t);               // UTF-8 safe pieces
            if (session.decode(t) != ember::Status::ok) break;       // context_full, cancelled
        }
        std::cout << '\n';
    } catch (const ember::Error& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}

// A complete program embedding ember: load a model, continue a prompt greedily, print timings.
//
//   ember-embed-example MODEL.gguf "Once upon a time" [N]
#include <cstdlib>
#include <iostream>
#include <string>

#include <ember/ember.hpp>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: " << argv[0] << " MODEL.gguf PROMPT [N]\n";
        return 2;
    }
    const int n_predict = argc > 3 ? std::atoi(argv[3]) : 32;
    try {
        auto model = ember::Model::load(argv[1], {.threads = 2});
        ember::Session session(model, {.context = 512});
        ember::Sampler sampler({.temperature = 0.0f});  // greedy

        std::cout << argv[2];
        ember::Status status = session.prefill(model.tokenize(argv[2], {.add_bos = true}));
        for (int i = 0; i < n_predict && status == ember::Status::ok; ++i) {
            const ember::Token token = sampler.sample(session.logits());
            if (model.is_end_of_generation(token)) break;
            std::cout << session.detokenize_stream(token) << std::flush;
            status = session.decode(token);
        }
        std::cout << '\n';
        const ember::Metrics& m = session.metrics();
        std::cerr << "prefill " << m.prefill_tokens_per_second() << " tok/s, decode "
                  << m.decode_tokens_per_second() << " tok/s\n";
    } catch (const ember::Error& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}

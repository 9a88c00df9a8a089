// Structured output: generate JSON that is an instance of a JSON Schema.
//
//   ember-json-example MODEL.gguf '{"type": "object", ...}' [PROMPT]
#include <iostream>
#include <string>

#include <ember/ember.hpp>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: " << argv[0] << " MODEL.gguf SCHEMA [PROMPT]\n";
        return 2;
    }
    try {
        auto model = ember::Model::load(argv[1], {.threads = 2});
        ember::Session session(model, {.context = 1024});
        ember::SamplerOptions options;
        options.temperature = 0.7f;
        options.seed = 42;
        options.json_schema = argv[2];  // or options.grammar = GBNF text
        ember::Sampler sampler(model, options);  // the grammar needs the model's vocabulary

        session.prefill(model.tokenize(argc > 3 ? argv[3] : "Here is the JSON:\n"));
        const ember::GenerateResult result = session.generate(sampler, {.max_tokens = 512});
        std::cout << result.text << '\n';
        if (!sampler.grammar_complete()) {
            std::cerr << "stopped before the JSON was complete\n";
            return 1;
        }
    } catch (const ember::Error& e) {
        std::cerr << "error: " << e.what() << '\n';
        return 1;
    }
    return 0;
}

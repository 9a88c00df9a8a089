// docs/batching.md: many requests on one model with ember::Engine (continuous batching).
#include <iostream>
#include <string_view>
#include <utility>

#include <ember/ember.hpp>

ember::RequestResult batching_example(const ember::Model& model) {
    // [snippet:engine]
    ember::Engine engine(model, {.max_sequences = 8, .context = 2048});
    ember::Request request;
    request.prompt = model.tokenize("Once upon a time");
    request.sampler = ember::Sampler({.temperature = 0.8f, .seed = 1});
    request.options.max_tokens = 128;
    request.options.stop = {"\n\n"};
    request.options.on_token = [](ember::Token, std::string_view text) {
        std::cout << text << std::flush;   // on the engine's worker thread
        return true;                       // false: stop this request
    };
    ember::RequestHandle handle = engine.submit(std::move(request));   // any thread
    ember::RequestResult result = handle.wait();                       // or on_done
    // [snippet:engine]
    return result;
}

// ember-chat: generate text with a GGUF model.
//
//   ember-chat -m MODEL -p PROMPT -n N [--temp T] [-t THREADS] [-c CONTEXT] ...
//
// Writes the prompt followed by the generated text to stdout and nothing else; logs and
// timings go to stderr. Exit codes: 0 success, 1 runtime error (bad model, prompt too long),
// 2 bad command line.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "ember/ember.hpp"
#include "chat_options.hpp"

int main(int argc, char** argv) {
    ember_chat::Options opt;
    try {
        opt = ember_chat::parse_options(argc, argv);
    } catch (const ember_chat::UsageError& e) {
        std::fprintf(stderr, "ember-chat: %s\n", e.what());
        return 2;
    }
    if (opt.help) {
        std::fputs(ember_chat::usage_text(), stdout);
        return 0;
    }
    try {
        ember::Model model = ember::Model::load(opt.model, {.threads = opt.threads});
        ember::Session session(model, {.context = opt.context, .threads = opt.threads});
        ember::Sampler sampler(opt.sampler);

        const std::vector<ember::Token> prompt = model.tokenize(opt.prompt, {.add_bos = true});
        std::fwrite(opt.prompt.data(), 1, opt.prompt.size(), stdout);
        std::fflush(stdout);
        for (ember::Token t : prompt) sampler.accept(t);
        ember::Status status = session.prefill(prompt);
        for (int i = 0; status == ember::Status::ok && (opt.n_predict < 0 || i < opt.n_predict); ++i) {
            const ember::Token t = sampler.sample(session.logits());
            if (model.is_end_of_generation(t)) break;
            const std::string text = session.detokenize_stream(t);
            std::fwrite(text.data(), 1, text.size(), stdout);
            std::fflush(stdout);
            status = session.decode(t);
        }
        std::fputs("\n", stdout);
        if (status != ember::Status::ok && status != ember::Status::context_full) {
            std::fprintf(stderr, "ember-chat: generation stopped: %s\n", ember::to_string(status));
        }
        if (!opt.quiet) {
            const ember::Metrics& m = session.metrics();
            std::fprintf(stderr,
                         "ember-chat: prompt %lld tokens, ttft %.1f ms, prefill %.1f tok/s, "
                         "decode %lld tokens at %.1f tok/s\n",
                         static_cast<long long>(m.prompt_tokens), m.ttft_seconds * 1e3,
                         m.prefill_tokens_per_second(), static_cast<long long>(m.generated_tokens),
                         m.decode_tokens_per_second());
        }
    } catch (const ember::Error& e) {
        std::fprintf(stderr, "ember-chat: error: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ember-chat: error: %s\n", e.what());
        return 1;
    }
    return 0;
}

// docs/sampling.md: a sampler with a seed, a repetition penalty and a banned token.
#include <cmath>
#include <vector>

#include <ember/ember.hpp>

void sampling_example(ember::Session& session, const std::vector<ember::Token>& prompt, ember::Token eos) {
    // [snippet:sampler]
    ember::SamplerOptions opt;          // llama.cpp's defaults: t 0.8, top-k 40, top-p 0.95, min-p 0.05
    opt.seed = 42;
    opt.repeat_penalty = 1.1f;
    opt.logit_bias = {{eos, -INFINITY}};  // ban a token
    ember::Sampler sampler(opt);
    for (ember::Token t : prompt) sampler.accept(t);   // prompt tokens count for the penalties
    ember::Token next = sampler.sample(session.logits());
    float p = sampler.last().probability;              // p(next) in the final distribution
    float h = sampler.last().entropy;                  // entropy of that distribution (nats)
    // [snippet:sampler]
    (void)next, (void)p, (void)h;
}

// docs/api.md: log-probabilities of generated tokens, as OpenAI's logprobs / top_logprobs.
#include <cstdio>

#include <ember/ember.hpp>

void logprobs_example(ember::Session& session, ember::Sampler& sampler) {
    // [snippet:logprobs]
    ember::GenerateOptions go;
    go.max_tokens = 16;
    go.logprobs = true;      // the model's raw distribution, before the sampler's stages
    go.top_logprobs = 3;     // and the 3 most likely tokens at each position
    ember::GenerateResult r = session.generate(sampler, go);
    for (const ember::TokenLogprobs& lp : r.logprobs) {
        std::printf("%d: %.3f (best %d: %.3f)\n", lp.token, lp.logprob, lp.top[0].token, lp.top[0].logprob);
    }
    // In a loop of your own: ember::logprobs(session.logits(), token, top_n) before decode(token).
    // [snippet:logprobs]
}

// docs/decoding.md: beam search, n samples of one prompt, best-of-N.
#include <ember/ember.hpp>

#include <cstdio>

void decoding_example(const ember::Model& model) {
    // [snippet:beams]
    ember::Session session(model);
    session.prefill(model.tokenize("Once upon a time"));

    ember::BeamSearchOptions bo;
    bo.beams = 4;
    bo.max_tokens = 32;
    bo.n_best = 2;                // also the runner-up
    ember::BeamSearchResult best = ember::beam_search(session, bo);   // the session is unchanged
    std::printf("%s (log-probability %.4f)\n", best.best.text.c_str(), best.best.logprob);
    // best.hypotheses: the n_best best, with score and done (ended by end of generation);
    // best.stats: forward passes, rows, KV blocks shared and copied
    // [snippet:beams]

    // [snippet:samples]
    ember::SamplerOptions so;
    so.temperature = 0.8f;
    so.seed = 42;
    std::vector<ember::Sampler> samplers = ember::make_samplers(model, so, 8);  // seeds 42..49
    ember::SampleOptions opt;
    opt.generate.max_tokens = 64;
    opt.generate.logprobs = true;     // for best_of's default scorer
    ember::SamplesResult r = ember::generate_samples(session, samplers, opt);
    // r.samples[i] is what session.generate(samplers[i], opt.generate) would give alone
    const std::size_t pick = ember::best_of(r.samples);   // highest mean log-probability
    const std::size_t shortest = ember::best_of(r.samples, [](const ember::GenerateResult& g) {
        return -static_cast<double>(g.text.size());       // or any scorer of your own
    });
    // [snippet:samples]
    std::printf("%s\n%s\n", r.samples[pick].text.c_str(), r.samples[shortest].text.c_str());
}

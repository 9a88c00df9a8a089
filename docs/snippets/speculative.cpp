// docs/speculative.md: speculative decoding with a draft model or prompt lookup.
#include <ember/ember.hpp>

ember::GenerateResult speculative_example(ember::Session& session, ember::Sampler& sampler) {
    // [snippet:use]
    ember::Model target = ember::Model::load("model-Q8_0.gguf");
    ember::Model draft = ember::Model::load("model-Q4_0.gguf");   // or a smaller model of the family
    ember::SpeculativeOptions so;
    so.draft = &draft;            // or: so.lookup_ngram = 3;  (prompt lookup, no second model)
    so.max_draft = 8;             // most tokens guessed per step (adaptive below it)
    ember::Speculator speculator(target, so);   // ember::Error if the vocabularies differ

    ember::GenerateOptions g;
    g.max_tokens = 256;
    g.speculative = &speculator;
    auto r = session.generate(sampler, g);
    const ember::Metrics& m = session.metrics();
    // m.speculative_steps, m.draft_tokens, m.accepted_tokens, m.acceptance_rate(),
    // m.mean_accepted_length(); m.generated_tokens / m.decode_seconds is the real decode speed
    // [snippet:use]
    (void)m;
    return r;
}

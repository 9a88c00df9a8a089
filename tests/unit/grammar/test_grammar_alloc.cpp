// A grammar sampler allocates nothing in steady state: masks come from the preallocated cache,
// the stack arena and scratch sets are sized at construction. (This executable replaces the
// global operator new; see support/alloc_counter.hpp.)
#include <catch2/catch.hpp>
#include <vector>

#include "ember/ember.hpp"
#include "support/alloc_counter.hpp"
#include "support/shared_data.hpp"

using ember_test::g_allocations;
using ember_test::g_counting;

TEST_CASE("grammar sampler: sample() allocates nothing in steady state", "[grammar][sampler][alloc]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    ember::ModelOptions mo;
    mo.threads = 1;
    const ember::Model model = ember::Model::load(ember_test::shared_file("models/stories260K.gguf").string(), mo);
    ember::SessionOptions so;
    so.context = 64;
    so.threads = 1;
    ember::Session session(model, so);
    session.prefill(model.tokenize("Once upon a time"));
    const std::vector<float> logits(session.logits().begin(), session.logits().end());

    for (float temperature : {0.0f, 0.9f}) {
        ember::SamplerOptions o;
        o.temperature = temperature;
        o.seed = 5;
        o.grammar = "root ::= [a-z ]+ \".\"";
        ember::Sampler sampler(model, o);
        for (int i = 0; i < 4; ++i) sampler.sample(logits);  // sizes buffers, fills the cache
        g_allocations = 0;
        g_counting = true;
        for (int i = 0; i < 64; ++i) sampler.sample(logits);
        g_counting = false;
        INFO("temperature " << temperature);
        CHECK(g_allocations.load() == 0);
    }
}

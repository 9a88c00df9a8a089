// sample() allocates nothing after the first call: this executable replaces the global
// operator new and counts calls while a flag is set.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "support/alloc_counter.hpp"

#include "ember/sampler.hpp"
#include "sampler_test_util.hpp"

using ember_test::g_allocations;
using ember_test::g_counting;

namespace {

long allocations_over_64_samples(const ember::SamplerOptions& options,
                                 const std::vector<float>& logits) {
    ember::Sampler sampler(options);
    for (ember::Token t : {1, 2, 3, 2}) sampler.accept(t);
    sampler.sample(logits);  // sizes the buffers
    g_allocations = 0;
    g_counting = true;
    float sink = 0.0f;
    for (int i = 0; i < 64; ++i) {
        sampler.sample(logits);
        sampler.accept(static_cast<ember::Token>(i));
        sink += sampler.last().probability + static_cast<float>(sampler.candidates().size());
    }
    g_counting = false;
    CHECK(sink > 0.0f);
    return g_allocations.load();
}

}  // namespace

TEST_CASE("the allocation counter sees allocations", "[sampler][alloc]") {
    g_allocations = 0;
    g_counting = true;
    auto* v = new std::vector<int>(100);
    g_counting = false;
    delete v;
    CHECK(g_allocations.load() >= 2);
}

TEST_CASE("sample() allocates nothing after the first call", "[sampler][alloc]") {
    const auto logits = sampler_test::random_logits(32000, 17, 3.0f);

    ember::SamplerOptions every_stage;
    every_stage.seed = 1;
    every_stage.repeat_penalty = 1.1f;
    every_stage.frequency_penalty = 0.2f;
    every_stage.presence_penalty = 0.1f;
    every_stage.typical_p = 0.9f;
    every_stage.logit_bias = {{5, -std::numeric_limits<float>::infinity()}, {7, 1.5f}};
    CHECK(allocations_over_64_samples(every_stage, logits) == 0);

    ember::SamplerOptions big_top_p;  // top-p over the whole vocabulary, both sorting passes
    big_top_p.seed = 2;
    big_top_p.top_k = 0;
    big_top_p.top_p = 0.99f;
    big_top_p.min_p = 0.0f;
    CHECK(allocations_over_64_samples(big_top_p, logits) == 0);

    ember::SamplerOptions reordered = every_stage;
    reordered.order = {ember::SamplerStage::temperature, ember::SamplerStage::min_p,
                       ember::SamplerStage::top_p,       ember::SamplerStage::typical_p,
                       ember::SamplerStage::top_k,       ember::SamplerStage::penalties,
                       ember::SamplerStage::logit_bias};
    CHECK(allocations_over_64_samples(reordered, logits) == 0);

    ember::SamplerOptions greedy;
    greedy.temperature = 0.0f;
    greedy.repeat_penalty = 1.3f;
    greedy.logit_bias = {{0, 2.0f}};
    CHECK(allocations_over_64_samples(greedy, logits) == 0);
}

// Helpers for the Engine tests: requests, and the reference each must equal (a lone Session
// running Session::generate with the same prompt and sampler).
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "unit/session/session_test_util.hpp"

namespace engine_test {

using session_test::stories;

inline const char* const kPrompts[] = {
    "Once upon a time",
    "The little dog",
    "Lily and Tom went to the park",
    "One day, a big bird",
    "Tim had a red ball. He",
    "The sun was hot and",
    "Mom said, \"Let's bake a cake",
    "There was a tiny frog who",
    "Sara found a shiny stone",
    "Ben and his dad",
    "The cat jumped",
    "In the forest, a bear",
    "A girl named Sue",
    "The boat was",
    "Max liked to run. One day",
    "Once there was a king",
};
inline constexpr int kNumPrompts = 16;

inline ember::EngineOptions eopts(int max_sequences, int step_tokens = 64, int context = 256, int threads = 1) {
    ember::EngineOptions o;
    o.max_sequences = max_sequences;
    o.step_tokens = step_tokens;
    o.context = context;
    o.threads = threads;
    return o;
}

/// Greedy for seed 0, else temperature 0.8 with that seed (llama.cpp's other defaults).
inline ember::Sampler sampler_for(std::uint64_t seed) {
    ember::SamplerOptions o;
    o.temperature = seed == 0 ? 0.0f : 0.8f;
    o.seed = seed;
    return ember::Sampler(o);
}

struct Spec {
    std::string prompt;
    std::uint64_t seed = 0;
    int max_tokens = 32;
    std::vector<std::string> stop;
};

inline ember::Request request_for(const ember::Model& model, const Spec& spec) {
    ember::Request r;
    r.prompt = model.tokenize(spec.prompt);
    r.sampler = sampler_for(spec.seed);
    r.options.max_tokens = spec.max_tokens;
    r.options.stop = spec.stop;
    return r;
}

/// What a lone Session gives for the spec.
inline ember::GenerateResult reference(const ember::Model& model, const Spec& spec, int context = 256) {
    ember::Session s(model, session_test::sopts(context));
    if (s.prefill(model.tokenize(spec.prompt)) != ember::Status::ok) return {};
    auto sampler = sampler_for(spec.seed);
    return s.generate(sampler, session_test::gopts(spec.max_tokens, spec.stop));
}

/// A request's result equals the lone session's (batch invariance).
inline void check_equal(const ember::RequestResult& got, const ember::GenerateResult& want) {
    CHECK(got.tokens == want.tokens);
    CHECK(got.text == want.text);
    CHECK(got.stop_reason == want.stop_reason);
    CHECK(got.status == want.status);
    CHECK(got.stop_string == want.stop_string);
    CHECK(got.error.empty());
}

}  // namespace engine_test

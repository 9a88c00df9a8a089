// Helpers for the Session tests: the stories260K model (loaded once), greedy and seeded loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "support/shared_data.hpp"

namespace session_test {

inline constexpr const char* kModel = "models/stories260K.gguf";

/// stories260K, loaded once per process (Models are immutable and shareable).
inline const ember::Model& stories() {
    static const ember::Model model = [] {
        ember::ModelOptions o;
        o.threads = 1;
        return ember::Model::load(ember_test::shared_file(kModel).string(), o);
    }();
    return model;
}

/// Session options (spelled out: designated initializers warn about the fields left out).
inline ember::SessionOptions sopts(int context, int threads = 1, int batch = 512) {
    ember::SessionOptions o;
    o.context = context;
    o.threads = threads;
    o.batch = batch;
    return o;
}

inline ember::GenerateOptions gopts(int max_tokens, std::vector<std::string> stop = {},
                                    std::function<bool(ember::Token, std::string_view)> on_token = {}) {
    ember::GenerateOptions o;
    o.max_tokens = max_tokens;
    o.stop = std::move(stop);
    o.on_token = std::move(on_token);
    return o;
}

inline ember::Sampler greedy_sampler(std::vector<std::pair<ember::Token, float>> bias = {}) {
    ember::SamplerOptions o;
    o.temperature = 0.0f;
    o.logit_bias = std::move(bias);
    return ember::Sampler(o);
}

/// The tokens a hand-written loop generates: sample, stop at end of generation, decode.
inline std::vector<ember::Token> manual_loop(ember::Session& s, ember::Sampler& sampler, int n) {
    std::vector<ember::Token> out;
    for (int i = 0; i < n; ++i) {
        const ember::Token t = sampler.sample(s.logits());
        if (s.model().is_end_of_generation(t)) break;
        out.push_back(t);
        if (s.decode(t) != ember::Status::ok) break;
    }
    return out;
}

/// A seeded sampler with temperature and a repetition penalty (its state has a history).
inline ember::Sampler seeded(std::uint64_t seed) {
    ember::SamplerOptions o;
    o.temperature = 0.8f;
    o.seed = seed;
    o.repeat_penalty = 1.1f;
    return ember::Sampler(o);
}

inline float max_abs_diff(std::span<const float> a, std::span<const float> b) {
    float m = a.size() == b.size() ? 0.0f : INFINITY;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
    return m;
}

inline std::vector<float> copy_logits(const ember::Session& s) {
    return {s.logits().begin(), s.logits().end()};
}

}  // namespace session_test

// Helpers for the sampler tests: candidate arrays from probabilities, as llama.cpp's
// tests/test-sampling.cpp builds them (logit = log p, token id = index).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "ember/sampler.hpp"
#include "sampling/stages.hpp"

namespace sampler_test {

struct Tester {
    std::vector<ember::SampleCandidate> storage;
    ember::sampling::CandidateArray cur;
    std::vector<ember::sampling::TypicalScratch::Scored> scored;
    std::vector<ember::SampleCandidate> reordered;

    explicit Tester(const std::vector<float>& probs) {
        for (std::size_t i = 0; i < probs.size(); ++i) {
            storage.push_back({static_cast<ember::Token>(i), std::log(probs[i]), probs[i]});
        }
        cur = {storage.data(), storage.size(), false, true};
    }

    void apply_typical(float p) {
        scored.resize(cur.size);
        reordered.resize(cur.size);
        ember::sampling::apply_typical_p(cur, p, {scored, reordered});
    }

    /// Softmax over what is left (llama.cpp's dist stage), then the probabilities in order.
    std::vector<float> probs() {
        ember::sampling::softmax(cur);
        std::vector<float> out;
        for (std::size_t i = 0; i < cur.size; ++i) out.push_back(cur.data[i].probability);
        return out;
    }

    std::vector<ember::Token> tokens() const {
        std::vector<ember::Token> out;
        for (std::size_t i = 0; i < cur.size; ++i) out.push_back(cur.data[i].token);
        return out;
    }
};

/// Deterministic pseudo-random logits in [-scale, scale) (a small LCG, independent of ember).
inline std::vector<float> random_logits(std::size_t n, std::uint32_t seed, float scale = 4.0f) {
    std::vector<float> out(n);
    std::uint64_t x = seed * 2654435761u + 12345u;
    for (auto& v : out) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        v = scale * (static_cast<float>(x >> 40) / static_cast<float>(1u << 24) * 2.0f - 1.0f);
    }
    return out;
}

}  // namespace sampler_test

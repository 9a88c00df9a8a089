// Sampler options for tests that need the plain softmax draw.
#pragma once

#include <cstdint>

#include "ember/sampler.hpp"

namespace ember_test {

/// Every filter off (no top-k, top-p or min-p), the given temperature and seed.
inline ember::SamplerOptions unfiltered_sampling(std::uint64_t seed, float temperature = 1.0f) {
    ember::SamplerOptions o;
    o.temperature = temperature;
    o.top_k = 0;
    o.top_p = 1.0f;
    o.min_p = 0.0f;
    o.seed = seed;
    return o;
}

}  // namespace ember_test

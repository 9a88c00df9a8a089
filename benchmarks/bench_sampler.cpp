// Sampler::sample() timing on a 128k vocabulary (uniform random logits in [-8, 8]), for the
// greedy path, the default chain, top-p without top-k and typical sampling, against one plain
// scan for the largest logit. Moved here from a hidden test: timings belong in benchmarks.
//   bench_sampler
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ember/sampler.hpp"
#include "../tests/unit/sampler/sampler_test_util.hpp"  // random_logits, shared with the tests

namespace {

double microseconds_per_sample(const ember::SamplerOptions& options, const std::vector<float>& logits, int n) {
    ember::Sampler sampler(options);
    sampler.sample(logits);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) sampler.sample(logits);
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    return took.count() / n;
}

}  // namespace

int main() {
    const auto logits = sampler_test::random_logits(131072, 99, 8.0f);
    ember::SamplerOptions greedy;
    greedy.temperature = 0.0f;
    ember::SamplerOptions defaults;
    defaults.seed = 1;
    defaults.repeat_penalty = 1.1f;
    ember::SamplerOptions top_p_only = defaults;
    top_p_only.top_k = 0;
    ember::SamplerOptions typical = defaults;
    typical.top_k = 0;
    typical.typical_p = 0.9f;
    {
        const auto start = std::chrono::steady_clock::now();
        std::size_t best = 0;
        for (int r = 0; r < 50; ++r) {
            for (std::size_t i = 1; i < logits.size(); ++i) {
                if (logits[i] > logits[best]) best = i;
            }
        }
        const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
        std::printf("plain max scan   %8.1f us (baseline, token %zu)\n", took.count() / 50, best);
    }
    std::printf("greedy           %8.1f us/sample\n", microseconds_per_sample(greedy, logits, 50));
    std::printf("default chain    %8.1f us/sample\n", microseconds_per_sample(defaults, logits, 50));
    std::printf("top-p, no top-k  %8.1f us/sample\n", microseconds_per_sample(top_p_only, logits, 20));
    std::printf("typical, no top-k%8.1f us/sample\n", microseconds_per_sample(typical, logits, 10));
    return 0;
}

// Speculative sampling keeps the target's output distribution: Sampler::sample_speculative on
// fixed distributions, and whole generate() runs of stories260K drafted by its Q4_0
// quantization, checked with chi-square tests against exact distributions. Seeded, so the
// results are the same on every run; wrong acceptance rules fail the same test (checked).
#include <catch2/catch.hpp>

#include <map>
#include <random>

#include "chi_square.hpp"
#include "spec_test_util.hpp"
#include "support/sampling_options.hpp"
#include "support/sanitized.hpp"

using ember::SampleCandidate;
using ember::Sampler;
using ember::Token;
using namespace spec_test;

namespace {

// The final distribution of `options`' pipeline for `logits` after `history`.
std::map<Token, double> final_distribution(const ember::SamplerOptions& options, std::span<const Token> history,
                                           std::span<const float> logits) {
    Sampler s(options);
    s.set_history(history);
    s.sample(logits);
    std::map<Token, double> p;
    for (const SampleCandidate& c : s.candidates()) {
        if (c.probability > 0.0f) p[c.token] += c.probability;
    }
    return p;
}

ember::SamplerOptions pipeline_options(std::uint64_t seed) {
    ember::SamplerOptions o = ember_test::unfiltered_sampling(seed, 0.9f);
    o.top_k = 5;
    o.repeat_penalty = 1.25f;
    return o;
}

}  // namespace

TEST_CASE("sample_speculative draws from the sampler's final distribution", "[speculative][sampling]") {
    const std::vector<float> logits = {2.0f, 1.5f, 1.0f, 0.3f, -0.5f, -3.0f};
    const std::vector<Token> history = {1};
    const auto options = pipeline_options(7);
    const std::map<Token, double> p = final_distribution(options, history, logits);
    REQUIRE(p.size() == 5);  // top-k removed token 5
    // A draft distribution unlike p, with mass on the token p excludes.
    const std::vector<SampleCandidate> q = {{0, 0, 0.05f}, {1, 0, 0.10f}, {2, 0, 0.40f},
                                            {3, 0, 0.30f}, {4, 0, 0.10f}, {5, 0, 0.05f}};
    std::discrete_distribution<int> draft_draw({0.05, 0.10, 0.40, 0.30, 0.10, 0.05});
    std::mt19937_64 rng(12345);

    const long n = 40000;
    Sampler sampler(options);
    std::map<Token, long> got, naive, resample_p;
    long accepted = 0;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (long i = 0; i < n; ++i) {
        const Token d = draft_draw(rng);
        sampler.set_history(history);
        const ember::SpeculativeSample v = sampler.sample_speculative(logits, d, q);
        got[v.token] += 1;
        accepted += v.accepted ? 1 : 0;
        CHECK(v.accepted == (v.token == d));
        // Two wrong rules on the same draws, to show the test can fail: keeping every draft p
        // allows, and on a rejection drawing from p instead of the residual.
        const double pd = p.count(d) ? p.at(d) : 0.0, qd = q[static_cast<std::size_t>(d)].probability;
        if (pd > 0.0) naive[d] += 1;
        else naive[v.token] += 1;
        if (uniform(rng) < std::min(1.0, pd / qd)) {
            resample_p[d] += 1;
        } else {
            double u = uniform(rng), cum = 0.0;
            Token pick = p.rbegin()->first;
            for (const auto& [t, pt] : p) {
                cum += pt;
                if (u < cum) { pick = t; break; }
            }
            resample_p[pick] += 1;
        }
    }
    const ChiSquare fit = chi_square(got, p, n);
    INFO("chi-square " << fit.statistic << " df " << fit.df << " critical " << fit.critical);
    CHECK(fit.fits());
    CHECK_FALSE(chi_square(naive, p, n).fits());
    CHECK_FALSE(chi_square(resample_p, p, n).fits());
    // The acceptance rate is sum(min(p, q)).
    double beta = 0.0;
    for (const auto& c : q) beta += std::min<double>(p.count(c.token) ? p.at(c.token) : 0.0, c.probability);
    const double rate = static_cast<double>(accepted) / n, sigma = std::sqrt(beta * (1 - beta) / n);
    CHECK(std::fabs(rate - beta) < 5 * sigma);
}

TEST_CASE("sample_speculative with a deterministic guess (prompt lookup) keeps the distribution", "[speculative][sampling]") {
    const std::vector<float> logits = {0.5f, 1.5f, 1.2f, 0.3f, -0.5f, 0.0f};
    const std::vector<Token> history = {1, 2};
    const auto options = pipeline_options(99);
    const std::map<Token, double> p = final_distribution(options, history, logits);
    Sampler sampler(options);
    std::map<Token, long> got;
    const long n = 30000;
    for (long i = 0; i < n; ++i) {
        const Token d = static_cast<Token>(i % 3);  // guesses that do not depend on the sampler's draws
        const SampleCandidate point{d, 0.0f, 1.0f};
        sampler.set_history(history);
        got[sampler.sample_speculative(logits, d, {&point, 1}).token] += 1;
    }
    const ChiSquare fit = chi_square(got, p, n);
    INFO("chi-square " << fit.statistic << " df " << fit.df << " critical " << fit.critical);
    CHECK(fit.fits());
}

TEST_CASE("sample_speculative: greedy keeps the draft only when it is the greedy token", "[speculative][sampling]") {
    const std::vector<float> logits = {0.1f, 3.0f, 2.0f};
    Sampler greedy;
    const SampleCandidate q{2, 0.0f, 1.0f};
    auto v = greedy.sample_speculative(logits, 2, {&q, 1});
    CHECK(v.token == 1);
    CHECK_FALSE(v.accepted);
    v = greedy.sample_speculative(logits, 1, {});
    CHECK(v.token == 1);
    CHECK(v.accepted);
    Sampler sampled(pipeline_options(1));
    CHECK_THROWS_WITH(sampled.sample_speculative(logits, 1, {&q, 1}), Catch::Contains("no probability"));
    CHECK_THROWS_WITH(sampled.sample_speculative(logits, -1, {&q, 1}), Catch::Contains("negative draft"));
    CHECK_THROWS_WITH(sampled.set_history(std::vector<Token>{1, -2}), Catch::Contains("negative token"));
}

TEST_CASE("speculative generation with a draft model samples the target's distribution", "[speculative][sampling][e2e]") {
    EMBER_REQUIRE_SHARED(kDraft);
    const ember::Model& model = target();
    const auto prompt = model.tokenize("Once upon a time, there was a");
    ember::SamplerOptions options;
    options.temperature = 1.5f;  // flat: the draft's guesses are often rejected
    options.top_k = 6;
    options.top_p = 1.0f;
    options.min_p = 0.0f;
    options.repeat_penalty = 1.1f;

    // The exact distribution of the first three tokens, by enumeration with plain decoding.
    std::map<std::vector<Token>, double> exact;
    ember::Session e(model, sopts(64));
    REQUIRE(e.prefill(prompt) == ember::Status::ok);
    const int n0 = e.n_past();
    std::vector<Token> h = prompt;
    for (const auto& [t1, p1] : final_distribution(options, h, e.logits())) {
        h.push_back(t1);
        REQUIRE(e.decode(t1) == ember::Status::ok);
        for (const auto& [t2, p2] : final_distribution(options, h, e.logits())) {
            h.push_back(t2);
            REQUIRE(e.decode(t2) == ember::Status::ok);
            for (const auto& [t3, p3] : final_distribution(options, h, e.logits())) exact[{t1, t2, t3}] = p1 * p2 * p3;
            h.pop_back();
            REQUIRE(e.truncate(n0 + 1) == ember::Status::ok);
        }
        h.pop_back();
        REQUIRE(e.truncate(n0) == ember::Status::ok);
    }

    ember::Speculator spec(model, draft_options(draft(), 2, false));
    ember::Session s(model, sopts(64));
    REQUIRE(s.prefill(prompt) == ember::Status::ok);
    std::map<std::vector<Token>, long> counts;
    const long n = ember_test::kSanitized ? 1000 : 3000;  // fixed seeds: either count must fit
    for (long i = 0; i < n; ++i) {
        REQUIRE(s.truncate(n0) == ember::Status::ok);
        options.seed = 1000 + static_cast<std::uint64_t>(i);
        Sampler sampler(options);
        sampler.set_history(prompt);
        ember::GenerateOptions g;
        g.max_tokens = 3;
        g.speculative = &spec;
        const auto r = s.generate(sampler, g);
        REQUIRE(r.tokens.size() == 3);  // stories260K does not end a story this early
        counts[r.tokens] += 1;
    }
    const ChiSquare fit = chi_square(counts, exact, n);
    INFO("chi-square " << fit.statistic << " df " << fit.df << " critical " << fit.critical << ", "
                       << exact.size() << " outcomes, acceptance " << s.metrics().acceptance_rate());
    CHECK(fit.fits());
    // Both paths ran: accepted guesses and replacements.
    CHECK(s.metrics().accepted_tokens > n / 4);
    CHECK(s.metrics().draft_tokens - s.metrics().accepted_tokens > n / 10);
}

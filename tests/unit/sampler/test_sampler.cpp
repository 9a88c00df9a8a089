// ember::Sampler through its public API: greedy, seeded draws, stage order, options, state.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "ember/error.hpp"
#include "ember/sampler.hpp"
#include "sampler_test_util.hpp"
#include "sampling/rng.hpp"
#include "support/sampling_options.hpp"

using ember::SamplerOptions;
using ember::SamplerStage;
using ember::Token;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> log_probs(const std::vector<float>& p) {
    std::vector<float> out;
    for (float v : p) out.push_back(std::log(v));
    return out;
}

/// Options with every filter off and temperature 1: the draw sees the plain softmax.
SamplerOptions plain(std::uint64_t seed = 1) { return ember_test::unfiltered_sampling(seed); }

std::vector<Token> run(ember::Sampler& s, const std::vector<float>& logits, int n) {
    std::vector<Token> out;
    for (int i = 0; i < n; ++i) out.push_back(s.sample(logits));
    return out;
}

float prob_of(const ember::Sampler& s, Token t) {
    for (const auto& c : s.candidates()) {
        if (c.token == t) return c.probability;
    }
    return 0.0f;
}

}  // namespace

TEST_CASE("RNG: splitmix64 seeding and xoshiro256** are pinned", "[sampler]") {
    // splitmix64 from 0 gives the well-known 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, ...
    ember::sampling::Rng rng(0);
    CHECK(rng.state()[0] == 0xE220A8397B1DCDAFull);
    CHECK(rng.state()[1] == 0x6E789E6AA1B965F4ull);
    // xoshiro256** first output: rotl(s1 * 5, 7) * 9.
    const std::uint64_t s1 = rng.state()[1] * 5;
    CHECK(rng.next() == ((s1 << 7) | (s1 >> 57)) * 9);
    for (int i = 0; i < 1000; ++i) {
        const double u = rng.uniform();
        REQUIRE(u >= 0.0);
        REQUIRE(u < 1.0);
    }
}

TEST_CASE("greedy: highest logit, ties to the lowest id, point-mass info", "[sampler]") {
    ember::Sampler greedy;
    CHECK(greedy.options().temperature == 0.0f);
    const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 2.0f, -kInf};
    CHECK(greedy.sample(logits) == 1);
    CHECK(greedy.last().token == 1);
    CHECK(greedy.last().probability == 1.0f);
    CHECK(greedy.last().entropy == 0.0f);
    REQUIRE(greedy.candidates().size() == 1);
    CHECK(greedy.candidates()[0].token == 1);

    SamplerOptions negative;
    negative.temperature = -1.0f;  // negative temperature is greedy too
    ember::Sampler s(negative);
    auto big = sampler_test::random_logits(131072, 5);
    big[99999] = 100.0f;
    big[100000] = 100.0f;
    for (int i = 0; i < 5; ++i) CHECK(s.sample(big) == 99999);
}

TEST_CASE("greedy still applies logit bias and penalties", "[sampler]") {
    SamplerOptions o;
    o.temperature = 0.0f;
    o.logit_bias = {{0, -kInf}};
    o.repeat_penalty = 1.1f;
    ember::Sampler s(o);
    const std::vector<float> logits = {5.0f, 2.0f, 1.9f, 1.8f};
    // 1, then 1 is penalized (2.0/1.1 = 1.818 < 1.9): 2, then 1 again (1.818 > 1.727, 1.8).
    CHECK(run(s, logits, 3) == std::vector<Token>{1, 2, 1});
}

TEST_CASE("penalties look only at the last penalty_last_n tokens", "[sampler]") {
    SamplerOptions o;
    o.temperature = 0.0f;
    o.repeat_penalty = 2.0f;
    o.penalty_last_n = 2;
    ember::Sampler s(o);
    const std::vector<float> logits = {2.0f, 1.5f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    s.accept(0);
    CHECK(s.sample(logits) == 1);  // 0 is penalized: 1.0 < 1.5
    s.accept(5);                   // history now {1, 5}: 0 fell out
    CHECK(s.sample(logits) == 0);
    s.reset();
    CHECK(s.sample(logits) == 0);
    CHECK_THROWS_AS(s.accept(-1), ember::Error);
}

TEST_CASE("frequency and presence penalties through the sampler", "[sampler]") {
    SamplerOptions o = plain();
    o.frequency_penalty = 5.0f;
    o.presence_penalty = 5.0f;
    ember::Sampler s(o);
    for (Token t : {0, 1, 2, 0, 0}) s.accept(t);
    s.sample(log_probs({0.2f, 0.2f, 0.2f, 0.2f, 0.2f}));
    CHECK(prob_of(s, 0) == Approx(0.0f).margin(1e-6));
    CHECK(prob_of(s, 1) == Approx(0.000023f).margin(1e-6));
    CHECK(prob_of(s, 3) == Approx(0.499977f).margin(1e-5));
}

TEST_CASE("last() and candidates() describe the final distribution", "[sampler]") {
    SamplerOptions o = plain(3);
    o.top_k = 3;
    ember::Sampler s(o);
    const Token t = s.sample(log_probs({0.1f, 0.2f, 0.3f, 0.4f}));
    const auto cands = s.candidates();
    REQUIRE(cands.size() == 3);
    const std::vector<float> expected = {0.44444f, 0.33333f, 0.22222f};
    double h = 0.0;
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(cands[i].token == Token(3 - i));
        CHECK(cands[i].probability == Approx(expected[i]).margin(1e-5));
        h -= expected[i] * std::log(expected[i]);
    }
    CHECK(s.last().token == t);
    CHECK(s.last().probability == Approx(prob_of(s, t)));
    CHECK(s.last().entropy == Approx(h).margin(1e-5));
}

TEST_CASE("draws follow the distribution", "[sampler]") {
    ember::Sampler s(plain(12345));
    const auto logits = log_probs({0.1f, 0.2f, 0.3f, 0.4f});
    std::vector<int> counts(4, 0);
    const int n = 40000;
    for (int i = 0; i < n; ++i) ++counts[s.sample(logits)];
    for (int t = 0; t < 4; ++t) {
        INFO("token " << t);
        CHECK(counts[t] / double(n) == Approx(0.1 * (t + 1)).margin(0.01));
    }
}

TEST_CASE("seeded determinism: same seed same tokens, different seed different", "[sampler]") {
    const auto logits = sampler_test::random_logits(1000, 9, 2.0f);
    SamplerOptions o;  // the default chain
    o.seed = 42;
    o.repeat_penalty = 1.1f;
    ember::Sampler a(o), b(o);
    o.seed = 43;
    ember::Sampler c(o);
    const auto ta = run(a, logits, 200);
    CHECK(run(b, logits, 200) == ta);
    CHECK(run(c, logits, 200) != ta);
    CHECK(a.seed() == 42);
    a.reset();  // same seed again, empty history
    CHECK(run(a, logits, 200) == ta);

    SamplerOptions r = o;
    r.seed = 0xFFFFFFFFu;  // random seed, reported by seed()
    ember::Sampler rs(r);
    CHECK(rs.options().seed == 0xFFFFFFFFu);
    o.seed = rs.seed();
    ember::Sampler replay(o);
    CHECK(run(rs, logits, 50) == run(replay, logits, 50));
}

TEST_CASE("the default order runs top-p before temperature", "[sampler]") {
    const auto logits = log_probs({0.1f, 0.2f, 0.3f, 0.4f});
    SamplerOptions o = plain();
    o.top_p = 0.7f;
    o.temperature = 0.25f;
    ember::Sampler def(o);
    def.sample(logits);
    // top-p at temperature 1 keeps {3, 2}; then p^4: {0.0256, 0.0081} / 0.0337.
    REQUIRE(def.candidates().size() == 2);
    CHECK(prob_of(def, 3) == Approx(0.0256 / 0.0337).margin(1e-4));

    o.order = {SamplerStage::temperature, SamplerStage::top_p};
    ember::Sampler temp_first(o);
    temp_first.sample(logits);
    // p^4 normalized is {0.003, 0.045, 0.229, 0.723}: 0.723 >= 0.7 keeps token 3 alone.
    REQUIRE(temp_first.candidates().size() == 1);
    CHECK(temp_first.candidates()[0].token == 3);
}

TEST_CASE("configurable order: logit bias before or after top-k", "[sampler]") {
    const auto logits = log_probs({0.1f, 0.2f, 0.3f, 0.4f});
    SamplerOptions o = plain();
    o.top_k = 1;
    o.logit_bias = {{0, 10.0f}};
    ember::Sampler bias_first(o);  // default: bias first, so token 0 wins top-1
    CHECK(bias_first.sample(logits) == 0);

    o.order = {SamplerStage::top_k, SamplerStage::logit_bias};
    ember::Sampler bias_last(o);
    CHECK(bias_last.sample(logits) == 3);

    o.order = {SamplerStage::logit_bias};  // top-k left out: the bias alone
    ember::Sampler no_top_k(o);
    no_top_k.sample(logits);
    CHECK(no_top_k.candidates().size() == 4);
}

TEST_CASE("logit bias -INFINITY bans a token", "[sampler]") {
    SamplerOptions o = plain(77);
    o.logit_bias = {{3, -kInf}, {1, -kInf}};
    ember::Sampler s(o);
    const auto logits = log_probs({0.1f, 0.2f, 0.3f, 0.4f});
    for (int i = 0; i < 2000; ++i) {
        const Token t = s.sample(logits);
        REQUIRE(t != 3);
        REQUIRE(t != 1);
    }
    SamplerOptions all = plain();
    all.logit_bias = {{0, -kInf}, {1, -kInf}};
    ember::Sampler banned(all);
    CHECK_THROWS_AS(banned.sample(std::vector<float>{1.0f, 2.0f}), ember::Error);
}

TEST_CASE("restore after save gives an identical continuation", "[sampler]") {
    const auto logits = sampler_test::random_logits(500, 21, 1.5f);
    SamplerOptions o;
    o.seed = 2024;
    o.repeat_penalty = 1.3f;
    o.frequency_penalty = 0.5f;
    o.penalty_last_n = 16;
    ember::Sampler a(o);
    run(a, logits, 10);
    const auto state = a.save_state();
    const auto continuation = run(a, logits, 30);

    ember::Sampler b(o);
    b.restore_state(state);
    CHECK(run(b, logits, 30) == continuation);
    a.restore_state(state);
    CHECK(run(a, logits, 30) == continuation);

    // Replaying the same calls reaches the same state (nothing hidden outside the state).
    ember::Sampler c(o);
    run(c, logits, 10);
    CHECK(c.save_state() == state);

    // A smaller penalty_last_n keeps the newest tokens of the saved history.
    SamplerOptions small = o;
    small.penalty_last_n = 2;
    ember::Sampler d(small);
    d.restore_state(state);
    const auto d_state = d.save_state();
    CHECK(d_state.size() == state.size() - 8 * 4);  // 10 saved tokens, 2 kept
    CHECK(std::equal(d_state.end() - 16, d_state.end() - 8, state.end() - 16));
}

TEST_CASE("corrupt or truncated state bytes throw and change nothing", "[sampler]") {
    const auto logits = sampler_test::random_logits(300, 4, 1.5f);
    SamplerOptions o;
    o.seed = 5;
    o.repeat_penalty = 1.2f;
    ember::Sampler s(o);
    run(s, logits, 7);
    const auto state = s.save_state();
    for (std::size_t i = 0; i < state.size(); ++i) {
        for (std::uint8_t flip : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
            auto bad = state;
            bad[i] ^= flip;
            INFO("byte " << i << " flip " << int(flip));
            REQUIRE_THROWS_AS(s.restore_state(bad), ember::Error);
        }
    }
    for (std::size_t n = 0; n < state.size(); ++n) {
        INFO("truncated to " << n);
        REQUIRE_THROWS_AS(s.restore_state(std::span(state).first(n)), ember::Error);
    }
    auto longer = state;
    longer.push_back(0);
    CHECK_THROWS_AS(s.restore_state(longer), ember::Error);

    // After all the failed restores, s continues exactly like an untouched copy.
    ember::Sampler twin(o);
    run(twin, logits, 7);
    CHECK(run(s, logits, 20) == run(twin, logits, 20));
}

TEST_CASE("invalid input and options", "[sampler]") {
    ember::Sampler s;
    CHECK_THROWS_AS(s.sample({}), ember::Error);
    CHECK_THROWS_AS(s.sample(std::vector<float>{1.0f, std::nanf("")}), ember::Error);
    CHECK_THROWS_AS(s.sample(std::vector<float>{1.0f, kInf}), ember::Error);
    CHECK_THROWS_AS(s.sample(std::vector<float>{-kInf, -kInf}), ember::Error);

    const auto bad = [](auto change) {
        SamplerOptions o;
        change(o);
        return [o] { ember::Sampler x(o); };
    };
    CHECK_THROWS_AS(bad([](SamplerOptions& o) { o.temperature = std::nanf(""); })(), ember::Error);
    CHECK_THROWS_AS(bad([](SamplerOptions& o) { o.top_p = std::nanf(""); })(), ember::Error);
    CHECK_THROWS_AS(bad([](SamplerOptions& o) { o.min_p = std::nanf(""); })(), ember::Error);
    CHECK_THROWS_AS(bad([](SamplerOptions& o) { o.repeat_penalty = 0.0f; })(), ember::Error);
    CHECK_THROWS_AS(bad([](SamplerOptions& o) { o.repeat_penalty = -1.0f; })(), ember::Error);
    CHECK_THROWS_AS(bad([](SamplerOptions& o) { o.penalty_last_n = -1; })(), ember::Error);
    CHECK_THROWS_AS(bad([](SamplerOptions& o) { o.logit_bias = {{-1, 1.0f}}; })(), ember::Error);
    CHECK_THROWS_AS(bad([](SamplerOptions& o) { o.logit_bias = {{1, kInf}}; })(), ember::Error);

    SamplerOptions out_of_vocab;
    out_of_vocab.logit_bias = {{4, 1.0f}};
    ember::Sampler oov(out_of_vocab);
    CHECK_THROWS_AS(oov.sample(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f}), ember::Error);
    CHECK(oov.sample(std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 5.0f}) >= 0);
}

TEST_CASE("out-of-range p values clamp as documented", "[sampler]") {
    const auto logits = log_probs({0.1f, 0.2f, 0.3f, 0.4f});
    const auto n_kept = [&](auto change) {
        SamplerOptions o = plain();
        change(o);
        ember::Sampler s(o);
        s.sample(logits);
        return s.candidates().size();
    };
    CHECK(n_kept([](SamplerOptions& o) { o.top_p = 1.5f; }) == 4);     // off
    CHECK(n_kept([](SamplerOptions& o) { o.top_p = -0.3f; }) == 1);    // most probable only
    CHECK(n_kept([](SamplerOptions& o) { o.min_p = 1.05f; }) == 1);    // most probable only
    CHECK(n_kept([](SamplerOptions& o) { o.min_p = -1.0f; }) == 4);    // off
    CHECK(n_kept([](SamplerOptions& o) { o.typical_p = 2.0f; }) == 4); // off
    CHECK(n_kept([](SamplerOptions& o) { o.typical_p = 0.0f; }) == 1); // most typical only
    CHECK(n_kept([](SamplerOptions& o) { o.top_k = -5; }) == 4);       // off
}

TEST_CASE("a sampler can change vocabulary size between calls", "[sampler]") {
    ember::Sampler s(plain());
    CHECK(s.sample(log_probs({0.5f, 0.5f})) < 2);
    CHECK(s.sample(log_probs({0.2f, 0.2f, 0.2f, 0.2f, 0.2f})) < 5);
    CHECK(s.candidates().size() == 5);
}

TEST_CASE("moved-to sampler keeps its state", "[sampler]") {
    const auto logits = sampler_test::random_logits(100, 1);
    SamplerOptions o;
    o.seed = 8;
    ember::Sampler a(o), twin(o);
    run(a, logits, 3);
    run(twin, logits, 3);
    ember::Sampler b(std::move(a));
    CHECK(run(b, logits, 10) == run(twin, logits, 10));
}

// Exact probabilities of each stage on small distributions; the cases and expected values are
// llama.cpp's tests/test-sampling.cpp (stage, then a softmax over what is left).
#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>

#include "sampler_test_util.hpp"

using ember::Token;
using sampler_test::Tester;
namespace s = ember::sampling;

namespace {

void check_probs(const std::vector<float>& got, const std::vector<float>& expected) {
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("candidate " << i);
        CHECK(std::fabs(got[i] - expected[i]) < 1e-5f);
    }
}

const std::vector<float> kP4 = {0.1f, 0.2f, 0.3f, 0.4f};

}  // namespace

TEST_CASE("temperature: 1 keeps the distribution, 0.5 squares it", "[sampler][stages]") {
    {
        Tester t(kP4);
        s::apply_temperature(t.cur, 1.0f);
        check_probs(t.probs(), kP4);
    }
    {
        Tester t(kP4);
        s::apply_temperature(t.cur, 0.5f);
        check_probs(t.probs(), {0.01f / 0.3f, 0.04f / 0.3f, 0.09f / 0.3f, 0.16f / 0.3f});
    }
}

TEST_CASE("top-k keeps the k most probable, sorted", "[sampler][stages]") {
    {
        Tester t(kP4);
        s::apply_top_k(t.cur, 1);
        check_probs(t.probs(), {1.0f});
        CHECK(t.tokens() == std::vector<Token>{3});
    }
    {
        Tester t(kP4);
        s::apply_top_k(t.cur, 3);
        check_probs(t.probs(), {0.44444f, 0.33333f, 0.22222f});
        CHECK(t.tokens() == std::vector<Token>{3, 2, 1});
    }
    for (int k : {0, 4, 10, -1}) {  // off: nothing removed, order kept
        Tester t(kP4);
        s::apply_top_k(t.cur, k);
        check_probs(t.probs(), kP4);
    }
}

TEST_CASE("top-p keeps the smallest prefix reaching p", "[sampler][stages]") {
    const std::vector<std::pair<float, std::vector<float>>> cases = {
        {0.0f, {1.0f}},
        {0.7f, {0.571429f, 0.428571f}},
        {0.8f, {0.44444f, 0.33333f, 0.22222f}},
        {1.0f, {0.1f, 0.2f, 0.3f, 0.4f}},
    };
    for (const auto& [p, expected] : cases) {
        INFO("top_p " << p);
        Tester t(kP4);
        s::apply_top_p(t.cur, p);
        check_probs(t.probs(), expected);
    }
}

TEST_CASE("min-p keeps p >= min_p * p_max, at least one", "[sampler][stages]") {
    const std::vector<std::pair<float, std::vector<float>>> cases = {
        {0.00f, {0.1f, 0.2f, 0.3f, 0.4f}},
        {0.24f, {0.1f, 0.2f, 0.3f, 0.4f}},
        {0.26f, {0.2f / 0.9f, 0.3f / 0.9f, 0.4f / 0.9f}},
        {0.49f, {0.2f / 0.9f, 0.3f / 0.9f, 0.4f / 0.9f}},
        {0.51f, {0.3f / 0.7f, 0.4f / 0.7f}},
        {0.74f, {0.3f / 0.7f, 0.4f / 0.7f}},
        {0.76f, {1.0f}},
        {1.00f, {1.0f}},
        {1.05f, {1.0f}},
    };
    for (const auto& [p, expected] : cases) {
        INFO("min_p " << p);
        Tester t(kP4);
        s::apply_min_p(t.cur, p);
        check_probs(t.probs(), expected);
        CHECK(t.tokens().back() == 3);
    }
}

TEST_CASE("typical-p keeps the locally typical tokens", "[sampler][stages]") {
    {
        Tester t({0.97f, 0.01f, 0.01f, 0.01f});
        t.apply_typical(0.5f);
        check_probs(t.probs(), {1.0f});
        CHECK(t.tokens() == std::vector<Token>{0});
    }
    {
        // llama.cpp leaves {0.2, 0.2, 0.2} un-normalized; after the final softmax each is 1/3.
        Tester t({0.4f, 0.2f, 0.2f, 0.2f});
        t.apply_typical(0.5f);
        check_probs(t.probs(), {1.0f / 3, 1.0f / 3, 1.0f / 3});
        CHECK(t.tokens() == std::vector<Token>{1, 2, 3});
    }
    {
        Tester t(kP4);
        t.apply_typical(1.0f);  // off
        check_probs(t.probs(), kP4);
    }
    {
        // H = 1.2799; |-log p - H| = {1.023, 0.330, 0.076, 0.364}: order 2, 1, 3, 0.
        Tester t(kP4);
        t.apply_typical(0.55f);  // 0.3 + 0.2 = 0.5 is not > 0.55, + 0.4 is
        CHECK(t.tokens() == std::vector<Token>{2, 1, 3});
        check_probs(t.probs(), {0.3f / 0.9f, 0.2f / 0.9f, 0.4f / 0.9f});
    }
}

TEST_CASE("penalties as llama.cpp applies them", "[sampler][stages]") {
    struct Case {
        std::vector<Token> last;
        std::vector<float> expected;
        float repeat, frequency, presence;
    };
    const std::vector<Case> cases = {
        {{0}, {0, 0.25f, 0.25f, 0.25f, 0.25f}, 50.0f, 0.0f, 0.0f},
        {{0, 1, 2}, {0, 0, 0, 0.5f, 0.5f}, 50.0f, 0.0f, 0.0f},
        {{0, 1, 2, 0, 0}, {0, 0, 0, 0.5f, 0.5f}, 50.0f, 0.0f, 0.0f},
        {{0}, {0.000011f, 0.249997f, 0.249997f, 0.249997f, 0.249997f}, 1.0f, 5.0f, 5.0f},
        {{0, 1, 2}, {0.000023f, 0.000023f, 0.000023f, 0.499966f, 0.499966f}, 1.0f, 5.0f, 5.0f},
        {{0, 1, 2, 0, 0}, {0.000000f, 0.000023f, 0.000023f, 0.499977f, 0.499977f}, 1.0f, 5.0f,
         5.0f},
    };
    for (const Case& c : cases) {
        for (bool shuffled : {false, true}) {
            INFO("history size " << c.last.size() << " repeat " << c.repeat << " shuffled "
                                 << shuffled);
            Tester t({0.2f, 0.2f, 0.2f, 0.2f, 0.2f});
            s::PenaltyHistory history(c.last.size());
            for (Token tok : c.last) history.push(tok);
            std::vector<std::int32_t> counts(5, 0);
            if (shuffled) {  // the per-candidate lookup path (not identity layout)
                std::reverse(t.storage.begin(), t.storage.end());
                t.cur.identity = false;
            }
            s::apply_penalties(t.cur, history, {c.repeat, c.frequency, c.presence}, counts);
            if (shuffled) std::reverse(t.storage.begin(), t.storage.end());
            check_probs(t.probs(), c.expected);
            CHECK(std::all_of(counts.begin(), counts.end(), [](int n) { return n == 0; }));
        }
    }
}

TEST_CASE("repeat penalty divides positive logits and multiplies negative ones",
          "[sampler][stages]") {
    std::vector<ember::SampleCandidate> data = {{0, 2.0f, 0}, {1, -2.0f, 0}, {2, 3.0f, 0}};
    s::CandidateArray cur{data.data(), data.size(), false, true};
    s::PenaltyHistory history(4);
    history.push(0);
    history.push(1);
    history.push(7);  // outside the vocabulary: ignored
    std::vector<std::int32_t> counts(3, 0);
    s::apply_penalties(cur, history, {2.0f, 0.0f, 0.0f}, counts);
    CHECK(data[0].logit == 1.0f);
    CHECK(data[1].logit == -4.0f);
    CHECK(data[2].logit == 3.0f);
}

TEST_CASE("penalty history is a ring buffer of the last N tokens", "[sampler][stages]") {
    s::PenaltyHistory h(3);
    for (Token t : {1, 2, 3, 4, 5}) h.push(t);
    REQUIRE(h.size() == 3);
    CHECK(h[0] == 3);
    CHECK(h[1] == 4);
    CHECK(h[2] == 5);
    s::PenaltyHistory off(0);
    off.push(1);
    CHECK(off.size() == 0);
}

TEST_CASE("logit bias: identity and lookup paths agree; -inf bans", "[sampler][stages]") {
    const std::vector<std::pair<Token, float>> bias = {
        {1, 2.0f}, {3, -std::numeric_limits<float>::infinity()}, {1, 0.5f}};
    std::vector<float> dense(4, 0.0f);
    for (auto [t, b] : bias) dense[t] += b;
    for (bool identity : {true, false}) {
        Tester t(kP4);
        t.cur.identity = identity;
        s::apply_logit_bias(t.cur, bias, dense);
        CHECK(t.storage[1].logit == Approx(std::log(0.2f) + 2.5f));
        CHECK(t.storage[3].logit == -std::numeric_limits<float>::infinity());
        const auto p = t.probs();
        CHECK(p[3] == 0.0f);
        CHECK(p[0] + p[1] + p[2] == Approx(1.0f));
    }
}

TEST_CASE("top-k on a large vocabulary matches a full sort", "[sampler][stages]") {
    const auto logits = sampler_test::random_logits(131072, 7);
    for (int k : {1, 40, 128, 129, 1000}) {
        INFO("k " << k);
        std::vector<ember::SampleCandidate> data(logits.size());
        for (std::size_t i = 0; i < logits.size(); ++i) data[i] = {Token(i), logits[i], 0};
        auto reference = data;
        std::sort(reference.begin(), reference.end(), s::ranks_before);
        s::CandidateArray cur{data.data(), data.size(), false, true};
        s::apply_top_k(cur, k);
        REQUIRE(cur.size == static_cast<std::size_t>(k));
        CHECK(cur.sorted);
        for (int i = 0; i < k; ++i) REQUIRE(data[i].token == reference[i].token);
    }
}

TEST_CASE("top-p on a large vocabulary matches a full sort (both passes)", "[sampler][stages]") {
    const auto logits = sampler_test::random_logits(5000, 11, 3.0f);
    for (float p : {0.01f, 0.1f, 0.9f, 0.999f}) {
        INFO("p " << p);
        std::vector<ember::SampleCandidate> data(logits.size());
        for (std::size_t i = 0; i < logits.size(); ++i) data[i] = {Token(i), logits[i], 0};
        s::CandidateArray cur{data.data(), data.size(), false, true};
        // Reference: the same probabilities, fully sorted, summed in the same order.
        auto reference = data;
        s::CandidateArray ref{reference.data(), reference.size(), false, true};
        s::softmax(ref);
        std::sort(reference.begin(), reference.end(), s::ranks_before);
        float cum = 0.0f;
        std::size_t expected = reference.size();
        for (std::size_t i = 0; i < reference.size(); ++i) {
            cum += reference[i].probability;
            if (cum >= p) {
                expected = i + 1;
                break;
            }
        }
        s::apply_top_p(cur, p);
        REQUIRE(cur.size == expected);
        for (std::size_t i = 0; i < expected; ++i) REQUIRE(data[i].token == reference[i].token);
        if (p > 0.5f) CHECK(expected > 256);  // the second pass ran
    }
}

TEST_CASE("min-p on a large vocabulary keeps exactly p >= min_p * p_max", "[sampler][stages]") {
    const auto logits = sampler_test::random_logits(20000, 3, 6.0f);
    std::vector<ember::SampleCandidate> data(logits.size());
    for (std::size_t i = 0; i < logits.size(); ++i) data[i] = {Token(i), logits[i], 0};
    const float max_logit = *std::max_element(logits.begin(), logits.end());
    std::size_t expected = 0;
    for (float l : logits) expected += std::exp(double(l) - max_logit) >= 0.05;
    s::CandidateArray cur{data.data(), data.size(), false, true};
    s::apply_min_p(cur, 0.05f);
    CHECK(cur.size == expected);
    CHECK_FALSE(cur.identity);
    for (std::size_t i = 1; i < cur.size; ++i) REQUIRE(data[i - 1].token < data[i].token);
}

TEST_CASE("argmax: highest logit, ties to the lowest id; draw skips zero probability",
          "[sampler][stages]") {
    std::vector<ember::SampleCandidate> data = {{5, 1.0f, 0.0f}, {2, 3.0f, 0.0f},
                                                {1, 3.0f, 0.0f}, {0, 2.0f, 0.0f}};
    s::CandidateArray cur{data.data(), data.size(), false, false};
    CHECK(s::argmax(cur) == 2);

    std::vector<ember::SampleCandidate> probs = {{0, 0, 0.0f}, {1, 0, 0.5f}, {2, 0, 0.0f},
                                                 {3, 0, 0.5f}, {4, 0, 0.0f}};
    s::CandidateArray p{probs.data(), probs.size(), false, true};
    CHECK(s::draw(p, 0.0) == 1);
    CHECK(s::draw(p, 0.4999) == 1);
    CHECK(s::draw(p, 0.5) == 3);
    CHECK(s::draw(p, 0.9999999) == 3);
    CHECK(s::entropy(p) == Approx(std::log(2.0f)));
}

// generate_samples, make_samplers, best_of: samples equal lone runs with seeds S..S+n-1, at any
// thread count, sharing the prompt's KV; bad input throws.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "decoding_test_util.hpp"
#include "support/sampling_options.hpp"

using decoding_test::session_after;
using decoding_test::stories;
using ember::Token;

namespace {

ember::SamplerOptions sampling(std::uint64_t seed) { return ember_test::unfiltered_sampling(seed); }

ember::SampleOptions samples_opts(int max_tokens, std::vector<std::string> stop = {}) {
    ember::SampleOptions o;
    o.generate.max_tokens = max_tokens;
    o.generate.stop = std::move(stop);
    o.generate.logprobs = true;
    o.generate.top_logprobs = 2;
    return o;
}

}  // namespace

TEST_CASE("generate_samples: sample i is the lone run with seed S + i", "[samples]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    const std::string prompt = "Once upon a time";
    for (const auto& stop : {std::vector<std::string>{}, std::vector<std::string>{"."}}) {
        ember::Session s = session_after(prompt);
        const std::vector<Token> before(s.tokens());
        auto samplers = ember::make_samplers(stories(), sampling(100), 8);
        std::vector<std::string> streamed(8);
        ember::SampleOptions so = samples_opts(40, stop);
        so.on_token = [&](int i, Token, std::string_view text) {
            streamed[static_cast<std::size_t>(i)] += text;
            return true;
        };
        const auto r = ember::generate_samples(s, samplers, so);
        CHECK(s.tokens() == before);  // the session is unchanged
        REQUIRE(r.samples.size() == 8);
        std::set<std::vector<Token>> distinct;
        for (int i = 0; i < 8; ++i) {
            INFO("sample " << i << " stops " << stop.size());
            ember::Session lone = session_after(prompt);
            ember::Sampler sampler(stories(), sampling(100 + static_cast<std::uint64_t>(i)));
            const auto want = lone.generate(sampler, samples_opts(40, stop).generate);
            const auto& got = r.samples[static_cast<std::size_t>(i)];
            CHECK(got.tokens == want.tokens);
            CHECK(got.text == want.text);
            CHECK(streamed[static_cast<std::size_t>(i)] == want.text);
            CHECK(got.stop_reason == want.stop_reason);
            CHECK(got.stop_string == want.stop_string);
            REQUIRE(got.logprobs.size() == want.logprobs.size());
            for (std::size_t k = 0; k < got.logprobs.size(); ++k) {
                CHECK(got.logprobs[k].logprob == want.logprobs[k].logprob);
                CHECK(got.logprobs[k].top.size() == 2);
            }
            distinct.insert(got.tokens);
        }
        CHECK(distinct.size() > 4);  // the seeds do differ
        // Every sample shares the prompt's pages instead of copying them.
        CHECK(r.stats.kv_blocks_shared >= 8 * stories().info().n_layer);
        CHECK(r.stats.rows <= 8 * r.stats.steps);
    }
}

TEST_CASE("generate_samples does not depend on the thread count", "[samples]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    ember::Session one = session_after("The little dog", 1), three = session_after("The little dog", 3);
    auto a_samplers = ember::make_samplers(stories(), sampling(7), 5);
    auto b_samplers = ember::make_samplers(stories(), sampling(7), 5);
    const auto a = ember::generate_samples(one, a_samplers, samples_opts(30));
    const auto b = ember::generate_samples(three, b_samplers, samples_opts(30));
    for (std::size_t i = 0; i < 5; ++i) CHECK(a.samples[i].tokens == b.samples[i].tokens);
}

TEST_CASE("generate_samples stops at the context and at the cancel callback as generate() does", "[samples]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    ember::Session s = session_after("Once upon a time", 1, 12);  // 5 prompt tokens
    auto samplers = ember::make_samplers(stories(), sampling(3), 3);
    const auto r = ember::generate_samples(s, samplers, samples_opts(-1));
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& x = r.samples[i];
        CHECK(x.stop_reason == ember::StopReason::context_full);
        CHECK(x.status == ember::Status::context_full);
        CHECK(x.tokens.size() == 7);  // as many as fill the context
        ember::Session lone = session_after("Once upon a time", 1, 12);
        ember::Sampler sampler(stories(), sampling(3 + i));
        CHECK(lone.generate(sampler, samples_opts(-1).generate).tokens == x.tokens);
    }
    ember::Session c = session_after("Once upon a time");
    int polls = 0;
    c.set_cancel_callback([&] { return ++polls > 20; });
    auto more = ember::make_samplers(stories(), sampling(3), 2);
    const auto cr = ember::generate_samples(c, more, samples_opts(64));
    for (const auto& x : cr.samples) CHECK(x.status == ember::Status::cancelled);
}

TEST_CASE("generate_samples and make_samplers reject bad input", "[samples]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    using Catch::Matchers::Contains;
    ember::Session s = session_after("Once upon a time");
    std::vector<ember::Sampler> none;
    CHECK_THROWS_WITH(ember::generate_samples(s, none, {}), Contains("give 1 to 256"));
    CHECK_THROWS_WITH(ember::make_samplers(stories(), sampling(1), 0), Contains("n must be in [1, 256]"));
    CHECK_THROWS_WITH(ember::make_samplers(stories(), sampling(1), 257), Contains("n must be in [1, 256]"));
    CHECK_THROWS_WITH(ember::make_samplers(stories(), sampling(0xFFFFFFFEu), 2), Contains("0xFFFFFFFF"));
    auto samplers = ember::make_samplers(stories(), sampling(1), 2);
    ember::SampleOptions bad;
    bad.generate.on_token = [](Token, std::string_view) { return true; };
    CHECK_THROWS_WITH(ember::generate_samples(s, samplers, bad), Contains("SampleOptions::on_token"));
    ember::SampleOptions neg;
    neg.generate.top_logprobs = -1;
    CHECK_THROWS_AS(ember::generate_samples(s, samplers, neg), ember::Error);
    ember::Session empty(stories(), {});
    CHECK_THROWS_WITH(ember::generate_samples(empty, samplers, {}), Contains("prefill a prompt first"));
    // A random base seed: the samplers still count up from it.
    auto random = ember::make_samplers(stories(), sampling(0xFFFFFFFFu), 3);
    CHECK(random[1].seed() == random[0].seed() + 1);
    CHECK(random[2].seed() == random[0].seed() + 2);
}

TEST_CASE("best_of: by mean log-probability or a scorer, ties to the lower index", "[samples]") {
    using Catch::Matchers::Contains;
    auto sample = [](std::vector<float> lps) {
        ember::GenerateResult r;
        for (float lp : lps) {
            r.tokens.push_back(1);
            ember::TokenLogprobs l;
            l.logprob = lp;
            r.logprobs.push_back(l);
        }
        return r;
    };
    const std::vector<ember::GenerateResult> xs = {sample({-1.0f, -3.0f}), sample({-0.5f, -1.5f, -1.0f}),
                                                   sample({-4.0f}), sample({-1.0f, -1.0f})};
    CHECK(ember::mean_logprob(xs[0]) == -2.0);
    CHECK(ember::best_of(xs) == 1);  // means -2, -1, -4, -1: the first of the two -1
    CHECK(ember::best_of(xs, [](const ember::GenerateResult& r) { return static_cast<double>(r.tokens.size()); }) == 1);
    CHECK(ember::best_of(xs, [](const ember::GenerateResult& r) { return -static_cast<double>(r.tokens.size()); }) == 2);
    CHECK(ember::mean_logprob(ember::GenerateResult{}) == -INFINITY);
    ember::GenerateResult no_lp;
    no_lp.tokens = {1, 2};
    CHECK_THROWS_WITH(ember::mean_logprob(no_lp), Contains("GenerateOptions::logprobs"));
    CHECK_THROWS_WITH(ember::best_of(std::vector<ember::GenerateResult>{}), Contains("no samples"));
    CHECK_THROWS_WITH(ember::best_of(xs, [](const ember::GenerateResult&) { return NAN; }), Contains("NaN"));
}

TEST_CASE("decoding on an F16 KV cache and other architectures (sliding windows): samples equal lone runs", "[samples]") {
    struct Case {
        const char* model;
        ember::KvType kv;
    };
    // (Q8_0 needs a head dimension of 32 or more: these models' is 8.)
    for (const Case c : {Case{"models/stories260K.gguf", ember::KvType::f16},
                         Case{"models/arch/stories260K-gemma2.gguf", ember::KvType::f32},
                         Case{"models/arch/stories260K-qwen3.gguf", ember::KvType::f32}}) {
        if (EMBER_SHARED_MISSING(c.model)) continue;
        INFO(c.model << " kv " << static_cast<int>(c.kv));
        ember::ModelOptions mo;
        mo.threads = 1;
        const ember::Model model = ember::Model::load(ember_test::shared_file(c.model).string(), mo);
        ember::SessionOptions so;
        so.context = 160;
        so.threads = 2;
        so.kv_type = c.kv;
        so.batch = 8;  // a prompt in chunks, past gemma2's window
        const auto prompt = model.tokenize("Once upon a time, there was a little girl named Lily. She loved to play outside.");
        ember::Session s(model, so);
        s.prefill(prompt);
        auto samplers = ember::make_samplers(model, sampling(11), 3);
        const auto r = ember::generate_samples(s, samplers, samples_opts(100));
        for (std::size_t i = 0; i < 3; ++i) {
            ember::Session lone(model, so);
            lone.prefill(prompt);
            ember::Sampler sampler(model, sampling(11 + i));
            CHECK(lone.generate(sampler, samples_opts(100).generate).tokens == r.samples[i].tokens);
        }
        // Beam search: each hypothesis's sum is its tokens' log-probabilities in a lone session.
        ember::BeamSearchOptions bo;
        bo.beams = 3;
        bo.max_tokens = 40;
        bo.n_best = 3;
        const auto b = ember::beam_search(s, bo);
        for (const auto& h : b.hypotheses) {
            ember::Session check(model, so);
            check.prefill(prompt);
            double sum = 0.0;
            for (Token t : h.tokens) {
                sum += ember::logprobs(check.logits(), t).logprob;
                REQUIRE(check.decode(t) == ember::Status::ok);
            }
            if (h.done) sum += ember::logprobs(check.logits(), model.eos()).logprob;
            CHECK(h.logprob == Approx(sum).margin(1e-4));
        }
    }
}

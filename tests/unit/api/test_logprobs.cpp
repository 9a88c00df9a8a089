// ember::logprobs and GenerateOptions::logprobs: the log-softmax of the raw logits, the top-n
// tokens, and what generate() reports per token.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.hpp"
#include "support/shared_data.hpp"
#include "api_test_util.hpp"

using namespace api_test;

namespace {


double log_softmax(const std::vector<float>& logits, std::size_t i) {
    double max = -INFINITY, sum = 0.0;
    for (float l : logits) max = std::max(max, static_cast<double>(l));
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
    return static_cast<double>(logits[i]) - max - std::log(sum);
}

}  // namespace

TEST_CASE("logprobs: log-softmax of the logits and the top tokens", "[api][logprobs]") {
    const std::vector<float> logits = {1.0f, 3.0f, -2.0f, 3.0f, 0.5f, -INFINITY};
    const ember::TokenLogprobs r = ember::logprobs(logits, 4, 3);
    CHECK(r.token == 4);
    CHECK(r.logprob == Approx(log_softmax(logits, 4)).epsilon(1e-6));
    REQUIRE(r.top.size() == 3);
    // Most likely first; the tie between 1 and 3 in token order.
    CHECK(r.top[0].token == 1);
    CHECK(r.top[1].token == 3);
    CHECK(r.top[2].token == 0);
    CHECK(r.top[0].logprob == r.top[1].logprob);
    CHECK(r.top[2].logprob == Approx(log_softmax(logits, 0)).epsilon(1e-6));
    double total = 0.0;
    for (std::size_t i = 0; i < logits.size(); ++i) total += std::exp(ember::logprobs(logits, static_cast<ember::Token>(i)).logprob);
    CHECK(total == Approx(1.0).epsilon(1e-6));
    CHECK(ember::logprobs(logits, 5).logprob == -INFINITY);
    CHECK(ember::logprobs(logits, 0).top.empty());
    CHECK(ember::logprobs(logits, 0, 100).top.size() == logits.size());

    // Large logits do not overflow.
    const std::vector<float> big = {1000.0f, 999.0f};
    CHECK(ember::logprobs(big, 1).logprob == Approx(-std::log1p(std::exp(1.0))).epsilon(1e-5));

    CHECK_THROWS_WITH(ember::logprobs({}, 0), Catch::Contains("no logits"));
    CHECK_THROWS_WITH(ember::logprobs(logits, 6), Catch::Contains("outside [0, 6)"));
    CHECK_THROWS_WITH(ember::logprobs(logits, -1), Catch::Contains("outside"));
    CHECK_THROWS_WITH(ember::logprobs(logits, 0, -1), Catch::Contains("top_n"));
    const std::vector<float> nan = {0.0f, std::numeric_limits<float>::quiet_NaN()};
    CHECK_THROWS_WITH(ember::logprobs(nan, 0), Catch::Contains("logit 1"));
    const std::vector<float> inf = {0.0f, INFINITY};
    CHECK_THROWS_AS(ember::logprobs(inf, 0), ember::Error);
    const std::vector<float> none = {-INFINITY, -INFINITY};
    CHECK_THROWS_WITH(ember::logprobs(none, 0), Catch::Contains("-INFINITY"));
}

TEST_CASE("logprobs: generate reports the raw distribution of every token", "[api][logprobs]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(ember_test::shared_file(kStories).string(), {.threads = 2});
    const auto prompt = model.tokenize("Once upon a time");

    // Sampled with temperature and penalties: logprobs still describe the model's own logits.
    ember::Session session(model, {.context = 64});
    ember::Sampler sampler({.temperature = 1.5f, .repeat_penalty = 1.3f, .seed = 7});
    REQUIRE(session.prefill(prompt) == ember::Status::ok);
    std::vector<ember::TokenLogprobs> streamed;
    ember::GenerateOptions go;
    go.max_tokens = 12;
    go.logprobs = true;
    go.top_logprobs = 5;
    go.on_token = [&](ember::Token t, std::string_view) {
        // The session's logits are still those t was drawn from.
        if (t != ember::kNoToken) streamed.push_back(ember::logprobs(session.logits(), t, 5));
        return true;
    };
    const ember::GenerateResult r = session.generate(sampler, go);
    REQUIRE(r.logprobs.size() == r.tokens.size());
    REQUIRE(streamed.size() == r.tokens.size());

    // Replay: the same tokens decoded by hand give the same distributions.
    ember::Session replay(model, {.context = 64});
    REQUIRE(replay.prefill(prompt) == ember::Status::ok);
    for (std::size_t i = 0; i < r.tokens.size(); ++i) {
        const std::vector<float> logits(replay.logits().begin(), replay.logits().end());
        const ember::TokenLogprobs& lp = r.logprobs[i];
        CHECK(lp.token == r.tokens[i]);
        CHECK(lp.logprob == Approx(log_softmax(logits, static_cast<std::size_t>(r.tokens[i]))).margin(1e-4));
        CHECK(lp.logprob == streamed[i].logprob);
        REQUIRE(lp.top.size() == 5);
        for (std::size_t k = 0; k + 1 < lp.top.size(); ++k) CHECK(lp.top[k].logprob >= lp.top[k + 1].logprob);
        CHECK(lp.top[0].logprob >= lp.logprob);
        CHECK(lp.top[0].logprob == Approx(log_softmax(logits, static_cast<std::size_t>(lp.top[0].token))).margin(1e-4));
        REQUIRE(replay.decode(r.tokens[i]) == ember::Status::ok);
    }

    // Greedy: the chosen token is the most likely one.
    session.reset();
    REQUIRE(session.prefill(prompt) == ember::Status::ok);
    ember::Sampler greedy({.temperature = 0.0f});
    const ember::GenerateResult g = session.generate(greedy, {.max_tokens = 8, .logprobs = true, .top_logprobs = 1});
    for (const auto& lp : g.logprobs) {
        REQUIRE(lp.top.size() == 1);
        CHECK(lp.top[0].token == lp.token);
        CHECK(lp.top[0].logprob == lp.logprob);
    }
    // Off by default; a negative count is an error.
    session.reset();
    REQUIRE(session.prefill(prompt) == ember::Status::ok);
    CHECK(session.generate(greedy, {.max_tokens = 2}).logprobs.empty());
    CHECK_THROWS_WITH(session.generate(greedy, {.max_tokens = 2, .logprobs = true, .top_logprobs = -1}),
                      Catch::Contains("top_logprobs"));
}

TEST_CASE("logprobs: on_logprobs streams each entry before its on_token, in a Session and an Engine",
          "[api][logprobs]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(ember_test::shared_file(kStories).string(), {.threads = 1});
    const auto prompt = model.tokenize("Once upon a time", {.add_bos = true});
    // Events in order: 'L' an entry for token t, 'T' on_token for t; stop strings hold text back
    // but never an entry.
    struct Recorder {
        std::vector<ember::TokenLogprobs> entries;
        std::vector<std::pair<char, ember::Token>> events;
        ember::GenerateOptions options() {
            ember::GenerateOptions go;
            go.max_tokens = 24;
            go.logprobs = true;
            go.top_logprobs = 2;
            go.stop = {"zzz"};
            go.on_logprobs = [this](const ember::TokenLogprobs& t) {
                entries.push_back(t);
                events.emplace_back('L', t.token);
            };
            go.on_token = [this](ember::Token t, std::string_view) {
                if (t != ember::kNoToken) events.emplace_back('T', t);
                return true;
            };
            return go;
        }
        void check(const std::vector<ember::TokenLogprobs>& result_entries, const std::vector<ember::Token>& tokens) {
            REQUIRE(entries.size() == tokens.size());
            REQUIRE(events.size() == 2 * tokens.size());
            for (std::size_t i = 0; i < tokens.size(); ++i) {
                CHECK(events[2 * i] == std::make_pair('L', tokens[i]));
                CHECK(events[2 * i + 1] == std::make_pair('T', tokens[i]));
                CHECK(entries[i].logprob == result_entries[i].logprob);
                CHECK(entries[i].top.size() == 2);
            }
        }
    };

    Recorder alone;
    ember::Session session(model, {.context = 64});
    REQUIRE(session.prefill(prompt) == ember::Status::ok);
    ember::Sampler sampler({.temperature = 0.9f, .seed = 11});
    const ember::GenerateResult r = session.generate(sampler, alone.options());
    alone.check(r.logprobs, r.tokens);

    Recorder batched;
    ember::EngineOptions eo;
    eo.context = 64;
    eo.threads = 1;
    ember::Engine engine(model, eo);
    ember::Request request;
    request.prompt = prompt;
    request.sampler = ember::Sampler({.temperature = 0.9f, .seed = 11});
    request.options = batched.options();
    const ember::RequestResult e = engine.submit(std::move(request)).wait();
    batched.check(e.logprobs, e.tokens);
    CHECK(e.tokens == r.tokens);
}

// Metrics: counts and monotonic timings are consistent with what ran and with an outside clock.
#include <catch2/catch.hpp>

#include <chrono>

#include "session_test_util.hpp"

using ember::Session;
using ember::Status;
using session_test::gopts;
using session_test::sopts;
using session_test::stories;

TEST_CASE("metrics: token counts, ttft, tokens per second, tpot", "[metrics]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time, there was a little girl");
    Session s(model, sopts(256));
    CHECK(s.metrics().prompt_tokens == 0);
    CHECK(s.metrics().tpot_seconds() == 0.0);
    CHECK(s.metrics().decode_tokens_per_second() == 0.0);

    using Clock = std::chrono::steady_clock;
    const auto t0 = Clock::now();
    REQUIRE(s.prefill(prompt) == Status::ok);
    const double prefill_outside = std::chrono::duration<double>(Clock::now() - t0).count();
    const auto& m = s.metrics();
    CHECK(m.prompt_tokens == static_cast<std::int64_t>(prompt.size()));
    CHECK(m.prefill_seconds > 0.0);
    CHECK(m.prefill_seconds <= prefill_outside);
    CHECK(m.ttft_seconds > 0.0);
    CHECK(m.ttft_seconds <= m.prefill_seconds);
    // The rate is at least what the outside clock gives (its interval contains the inside one).
    CHECK(m.prefill_tokens_per_second() >= static_cast<double>(prompt.size()) / prefill_outside);
    const double ttft = m.ttft_seconds;

    ember::Sampler sampler;
    const auto t1 = Clock::now();
    const auto r = s.generate(sampler, gopts(50));
    const double generate_outside = std::chrono::duration<double>(Clock::now() - t1).count();
    CHECK(m.generated_tokens == static_cast<std::int64_t>(r.tokens.size()));
    CHECK(m.decode_seconds > 0.0);
    CHECK(m.decode_seconds <= generate_outside);
    const auto n = static_cast<double>(r.tokens.size());
    REQUIRE(n > 0);
    CHECK(m.tpot_seconds() > 0.0);
    CHECK(m.tpot_seconds() <= generate_outside / n);
    CHECK(m.decode_tokens_per_second() >= n / generate_outside);
    CHECK(m.decode_tokens_per_second() > 10.0);  // stories260K is tiny: well above this anywhere

    // A second prefill adds to the counts but is not the first token any more.
    REQUIRE(s.prefill(prompt) == Status::ok);
    CHECK(m.prompt_tokens == 2 * static_cast<std::int64_t>(prompt.size()));
    CHECK(m.ttft_seconds == ttft);
    // Failed steps do not count.
    CHECK(s.decode(-1) == Status::invalid_input);
    CHECK(m.generated_tokens == static_cast<std::int64_t>(r.tokens.size()));
    s.reset();
    CHECK(m.prompt_tokens == 0);
    CHECK(m.generated_tokens == 0);
    CHECK(m.prefill_seconds == 0.0);
    CHECK(m.decode_seconds == 0.0);
    CHECK(m.ttft_seconds == 0.0);
}

TEST_CASE("metrics: rates from literal counts and times", "[metrics]") {
    ember::Metrics m;
    CHECK(m.prefill_tokens_per_second() == 0.0);  // no time yet: 0, not a division by zero
    CHECK(m.decode_tokens_per_second() == 0.0);
    CHECK(m.tpot_seconds() == 0.0);
    m.prompt_tokens = 12;
    m.prefill_seconds = 0.25;
    m.generated_tokens = 40;
    m.decode_seconds = 2.0;
    CHECK(m.prefill_tokens_per_second() == 48.0);
    CHECK(m.decode_tokens_per_second() == 20.0);
    CHECK(m.tpot_seconds() == 0.05);
}

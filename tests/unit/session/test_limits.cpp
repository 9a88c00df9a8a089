// Sizes and counts from options are checked before anything is allocated (issue #16): an
// absurd context, thread count or penalty window is an ember::Error saying what it needs, never
// std::bad_alloc, an OOM kill or a million-thread pool.
#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <limits>

#include "runtime/memory.hpp"
#include "session_test_util.hpp"

using session_test::sopts;
using session_test::stories;

TEST_CASE("limits: an absurd context is an ember::Error saying how many bytes it needs", "[limits]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    CHECK_THROWS_WITH(ember::Session(stories(), sopts(INT_MAX)),
                      Catch::Contains("context 2147483647") && Catch::Contains("needs") &&
                          Catch::Contains("GiB, more than the"));
    ember::SessionOptions o = sopts(64);
    o.logits_all = true;
    o.batch = INT_MAX;  // capped by the context: fits
    CHECK_NOTHROW(ember::Session(stories(), o));
}

TEST_CASE("limits: thread counts beyond kMaxThreads are refused", "[limits]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    CHECK_THROWS_WITH(ember::Session(stories(), sopts(64, ember::kMaxThreads + 1)), Catch::Contains("threads"));
    CHECK_THROWS_WITH(ember::Session(stories(), sopts(64, INT_MAX)), Catch::Contains("[0, 1024]"));
    ember::ModelOptions mo;
    mo.threads = 1'000'000;
    CHECK_THROWS_WITH(ember::Model::load(ember_test::shared_file(session_test::kModel).string(), mo),
                      Catch::Contains("stories260K.gguf") && Catch::Contains("threads"));
}

TEST_CASE("limits: the sampler checks its options before sizing the penalty window", "[limits]") {
    ember::SamplerOptions o;
    o.penalty_last_n = 2'000'000'000;  // 8 GB if it were allocated first
    CHECK_THROWS_WITH(ember::Sampler(o), Catch::Contains("penalty_last_n") && Catch::Contains("1048576"));
    o.penalty_last_n = ember::kMaxPenaltyWindow;
    CHECK_NOTHROW(ember::Sampler(o));
    for (const float bad : {INFINITY, -INFINITY, NAN}) {
        ember::SamplerOptions t;
        t.temperature = bad;
        CHECK_THROWS_AS(ember::Sampler(t), ember::Error);
        ember::SamplerOptions p;
        p.presence_penalty = bad;
        CHECK_THROWS_AS(ember::Sampler(p), ember::Error);
    }
}

TEST_CASE("limits: check_memory names what needs the memory", "[limits]") {
    CHECK(ember::available_memory() > 0);
    CHECK_NOTHROW(ember::check_memory(1 << 20, "a small buffer"));
    CHECK_THROWS_WITH(ember::check_memory(UINT64_MAX, "the universe"),
                      Catch::StartsWith("the universe needs") && Catch::Contains("of memory available"));
    CHECK(ember::saturating_mul(UINT64_MAX / 2, 3) == UINT64_MAX);
    CHECK(ember::saturating_add(UINT64_MAX - 1, 2) == UINT64_MAX);
}

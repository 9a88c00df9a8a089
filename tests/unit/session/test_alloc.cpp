// Session::decode + a greedy Sampler::sample allocate nothing after warm-up: this executable
// replaces the global operator new and counts calls (from every thread) while a flag is set.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>

#include "support/alloc_counter.hpp"

#include "session_test_util.hpp"
#include "support/split_small_work.hpp"

using ember_test::g_allocations;
using ember_test::g_counting;

namespace {

// Allocations over 64 decode steps after 8 warm-up steps (the thread pool starts its workers
// and the sampler sizes its buffers on first use).
long allocations_over_64_decodes(const ember::Model& model, ember::SessionOptions options,
                                 bool with_cancel_callback) {
    ember::Session s(model, options);
    if (with_cancel_callback) s.set_cancel_callback([] { return false; });
    ember::Sampler sampler;  // greedy
    REQUIRE(s.prefill(model.tokenize("Once upon a time")) == ember::Status::ok);
    for (int i = 0; i < 8; ++i) REQUIRE(s.decode(sampler.sample(s.logits())) == ember::Status::ok);
    g_allocations = 0;
    g_counting = true;
    int ok = 0;
    for (int i = 0; i < 64; ++i) ok += s.decode(sampler.sample(s.logits())) == ember::Status::ok ? 1 : 0;
    g_counting = false;
    CHECK(ok == 64);
    return g_allocations.load();
}

}  // namespace

TEST_CASE("decode loop: no allocation after warm-up", "[alloc]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = session_test::stories();
    // The counter works.
    g_allocations = 0;
    g_counting = true;
    auto* probe = new std::vector<int>(100);
    g_counting = false;
    delete probe;
    REQUIRE(g_allocations.load() >= 1);

    const ember_test::SplitSmallWork split;  // 2 threads really run loops on a worker
    for (const int threads : {1, 2}) {
        CAPTURE(threads);
        CHECK(allocations_over_64_decodes(model, session_test::sopts(256, threads), false) == 0);
        CHECK(allocations_over_64_decodes(model, session_test::sopts(256, threads), true) == 0);
    }
    // Context shifts inside decode allocate nothing either (context 32: several shifts).
    auto shift = session_test::sopts(32);
    shift.context_shift = true;
    shift.n_keep = 1;
    CHECK(allocations_over_64_decodes(model, shift, false) == 0);
    // Nor does a clone.
    ember::Session s(model, session_test::sopts(128));
    REQUIRE(s.prefill(model.tokenize("Once upon a time")) == ember::Status::ok);
    ember::Session c = s.clone();
    ember::Sampler sampler;
    c.decode(sampler.sample(c.logits()));
    g_allocations = 0;
    g_counting = true;
    for (int i = 0; i < 32; ++i) c.decode(sampler.sample(c.logits()));
    g_counting = false;
    CHECK(g_allocations.load() == 0);
}

TEST_CASE("prefill: no allocation after warm-up, in one batch or in chunks", "[alloc]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = session_test::stories();
    const std::vector<ember::Token> prompt =
        model.tokenize("Once upon a time, there was a little girl named Lily. She loved to play outside.");
    REQUIRE(prompt.size() > 12);
    const ember_test::SplitSmallWork split;
    for (const int batch : {512, 5}) {
        for (const int threads : {1, 2}) {
            CAPTURE(batch, threads);
            ember::Session s(model, session_test::sopts(128, threads, batch));
            // Warm-up: the thread pool starts its workers on the first parallel loop.
            REQUIRE(s.prefill(prompt) == ember::Status::ok);
            s.reset();
            g_allocations = 0;
            g_counting = true;
            const ember::Status st = s.prefill(prompt);
            // A second prefill after the first, continuing the same sequence.
            const ember::Status st2 = s.prefill(std::span(prompt).first(4));
            g_counting = false;
            CHECK(st == ember::Status::ok);
            CHECK(st2 == ember::Status::ok);
            CHECK(g_allocations.load() == 0);
        }
    }
}

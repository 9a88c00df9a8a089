// ember::Engine: continuous batching gives every request exactly what a lone Session gives it
// (batch invariance), whatever runs beside it; requests join, leave, cancel and fail alone.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "engine_test_util.hpp"

using ember::Engine;
using ember::RequestHandle;
using ember::RequestResult;
using ember::Status;
using ember::StopReason;
using engine_test::check_equal;
using engine_test::eopts;
using engine_test::reference;
using engine_test::request_for;
using engine_test::Spec;
using engine_test::stories;

namespace {

std::vector<Spec> specs(std::uint64_t seed_base, int max_tokens) {
    std::vector<Spec> out;
    for (int i = 0; i < engine_test::kNumPrompts; ++i) {
        out.push_back({engine_test::kPrompts[i], seed_base == 0 ? 0 : seed_base + static_cast<std::uint64_t>(i),
                       max_tokens + 3 * (i % 5), {}});
    }
    return out;
}

}  // namespace

TEST_CASE("engine: every request equals a lone session at parallel 1, 5 and 16 (greedy and seeded)",
          "[engine][batch-invariance]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    for (const std::uint64_t seed_base : {std::uint64_t{0}, std::uint64_t{1000}}) {
        CAPTURE(seed_base);
        const auto all = specs(seed_base, 40);
        std::vector<ember::GenerateResult> want;
        for (const Spec& s : all) want.push_back(reference(model, s));
        for (const int parallel : {1, 5, 16}) {
            // A small step budget: prompts are prefilled in chunks beside others' decoding.
            Engine engine(model, eopts(parallel, std::max(parallel, 12)));
            std::vector<RequestHandle> handles;
            for (const Spec& s : all) handles.push_back(engine.submit(request_for(model, s)));
            for (std::size_t i = 0; i < all.size(); ++i) {
                CAPTURE(parallel, i);
                const RequestResult r = handles[i].wait();
                check_equal(r, want[i]);
                CHECK(r.id == handles[i].id());
                CHECK(r.prompt_tokens == static_cast<int>(model.tokenize(all[i].prompt).size()));
            }
            const auto st = engine.stats();
            CHECK(st.requests_done == static_cast<std::int64_t>(all.size()));
            if (parallel > 1) CHECK(st.steps < st.decoded_tokens);  // sequences really shared passes
        }
        // Different prompts and seeds gave different streams.
        CHECK(want[0].tokens != want[1].tokens);
    }
}

TEST_CASE("engine: stop strings, token limits and end of generation as Session::generate",
          "[engine]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const std::vector<Spec> all = {{"Once upon a time", 0, 200, {"Lily"}},
                                   {"The little dog", 0, 200, {". ", "park"}},
                                   {"Once upon a time", 0, 0, {}},
                                   {"The cat jumped", 7, 300, {}},  // runs to the end of the context
                                   {"Ben and his dad", 0, 5, {"xyz"}}};
    Engine engine(model, eopts(3, 16, 96));
    std::vector<RequestHandle> handles;
    for (const Spec& s : all) handles.push_back(engine.submit(request_for(model, s)));
    for (std::size_t i = 0; i < all.size(); ++i) {
        CAPTURE(i);
        check_equal(handles[i].wait(), reference(model, all[i], 96));
    }
    CHECK(handles[0].wait().stop_reason == StopReason::stop_string);
    CHECK(handles[2].wait().tokens.empty());
}

TEST_CASE("engine: requests join and leave mid-stream, also submitted from callbacks", "[engine]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    auto all = specs(77, 8);
    for (std::size_t i = 0; i < all.size(); ++i) all[i].max_tokens = 3 + static_cast<int>((i * 7) % 23);
    Engine engine(model, eopts(3, 8));
    std::vector<RequestHandle> handles(all.size() + 1);
    const Spec late{"The boat was", 5, 20, {}};
    std::atomic<int> steps_seen{0};
    for (std::size_t i = 0; i < all.size(); ++i) {
        ember::Request r = request_for(model, all[i]);
        if (i == 1) {
            // Its 4th token submits another request, which joins while others run.
            r.options.on_token = [&](ember::Token, std::string_view) {
                if (++steps_seen == 4) handles.back() = engine.submit(request_for(model, late));
                return true;
            };
        }
        handles[i] = engine.submit(std::move(r));
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        CAPTURE(i);
        check_equal(handles[i].wait(), reference(model, all[i]));
    }
    engine.wait_idle();
    REQUIRE(handles.back().id() != 0);
    check_equal(handles.back().wait(), reference(model, late));
    const auto st = engine.stats();
    CHECK(st.running == 0);
    CHECK(st.queued == 0);
}

TEST_CASE("engine: cancelling one of four leaves the others untouched", "[engine]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto all = specs(500, 48);
    std::vector<ember::GenerateResult> want;
    for (std::size_t i = 0; i < 4; ++i) want.push_back(reference(model, all[i]));
    for (const bool from_callback : {false, true}) {
        CAPTURE(from_callback);
        Engine engine(model, eopts(4, 16));
        std::vector<RequestHandle> handles(4);
        std::atomic<int> emitted{0};
        std::atomic<bool> cancelled{false};
        // Request 2 first, so that request 0's callback may use its handle.
        for (const std::size_t i : {2, 0, 1, 3}) {
            ember::Request r = request_for(model, all[i]);
            if (i == 2 && !from_callback) {
                // Its 6th token waits until the main thread has cancelled it.
                r.options.on_token = [&](ember::Token, std::string_view) {
                    if (++emitted == 6) {
                        while (!cancelled.load()) std::this_thread::yield();
                    }
                    return true;
                };
            }
            if (i == 0 && from_callback) {
                r.options.on_token = [&, h = handles[2]](ember::Token, std::string_view) {
                    if (++emitted == 6) h.cancel();
                    return true;
                };
            }
            handles[i] = engine.submit(std::move(r));
        }
        if (!from_callback) {
            while (emitted.load() < 6) std::this_thread::yield();
            handles[2].cancel();
            cancelled = true;
        }
        for (std::size_t i = 0; i < 4; ++i) {
            CAPTURE(i);
            const RequestResult r = handles[i].wait();
            if (i != 2) {
                check_equal(r, want[i]);
                continue;
            }
            CHECK(r.stop_reason == StopReason::cancelled);
            CHECK(r.status == Status::cancelled);
            CHECK(r.tokens.size() >= (from_callback ? 3u : 6u));
            CHECK(r.tokens.size() < want[i].tokens.size());
            CHECK(std::equal(r.tokens.begin(), r.tokens.end(), want[i].tokens.begin()));
        }
    }
}

TEST_CASE("engine: on_token returning false or throwing, and a failing sampler, end only that request",
          "[engine]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto all = specs(0, 30);
    Engine engine(model, eopts(4, 32));
    std::vector<RequestHandle> handles;
    std::vector<std::string> done_order;
    for (std::size_t i = 0; i < 5; ++i) {
        ember::Request r = request_for(model, all[i]);
        int count = 0;
        if (i == 0) r.options.on_token = [count](ember::Token, std::string_view) mutable { return ++count < 3; };
        if (i == 1) {
            r.options.on_token = [count](ember::Token, std::string_view) mutable {
                if (++count == 4) throw std::runtime_error("client went away");
                return true;
            };
        }
        if (i == 2) {
            ember::SamplerOptions o;
            o.temperature = 0.0f;
            o.logit_bias = {{100000, 1.0f}};  // outside the vocabulary: sample() throws
            r.sampler = ember::Sampler(o);
        }
        r.on_done = [&done_order, i](const RequestResult&) { done_order.push_back(std::to_string(i)); };
        handles.push_back(engine.submit(std::move(r)));
    }
    const RequestResult stopped = handles[0].wait();
    CHECK(stopped.stop_reason == StopReason::cancelled);
    CHECK(stopped.status == Status::ok);
    CHECK(stopped.tokens.size() == 3);
    const RequestResult thrown = handles[1].wait();
    CHECK(thrown.stop_reason == StopReason::error);
    CHECK(thrown.error == "client went away");
    CHECK(thrown.tokens.size() == 4);
    const RequestResult bad_sampler = handles[2].wait();
    CHECK(bad_sampler.stop_reason == StopReason::error);
    CHECK(bad_sampler.error.find("vocabulary") != std::string::npos);
    CHECK(bad_sampler.tokens.empty());
    for (std::size_t i = 3; i < 5; ++i) check_equal(handles[i].wait(), reference(model, all[i]));
    engine.wait_idle();
    CHECK(done_order.size() == 5);
}

TEST_CASE("engine: a long prompt is prefilled in chunks while others keep decoding", "[engine]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    std::string long_text;
    for (int i = 0; i < 12; ++i) long_text += "Once upon a time, there was a little girl named Lily. ";
    const Spec short_spec{"The little dog", 0, 40, {}}, long_spec{long_text, 0, 10, {}};
    REQUIRE(model.tokenize(long_text).size() > 150);
    Engine engine(model, eopts(2, 8, 512));
    std::atomic<int> short_tokens{0}, short_tokens_at_long_first{-1};
    ember::Request a = request_for(model, short_spec);
    a.options.on_token = [&](ember::Token, std::string_view) { ++short_tokens; return true; };
    auto ha = engine.submit(std::move(a));
    ember::Request b = request_for(model, long_spec);
    b.options.on_token = [&](ember::Token, std::string_view) {
        if (short_tokens_at_long_first < 0) short_tokens_at_long_first = short_tokens.load();
        return true;
    };
    auto hb = engine.submit(std::move(b));
    check_equal(ha.wait(), reference(model, short_spec, 512));
    check_equal(hb.wait(), reference(model, long_spec, 512));
    // 150+ prompt tokens at <= 7 per step: the short request decoded many tokens meanwhile.
    CHECK(short_tokens_at_long_first.load() >= 20);
}

TEST_CASE("engine: bad requests and options are errors; destruction cancels what is left", "[engine]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    CHECK_THROWS_AS(Engine(model, eopts(0)), ember::Error);
    CHECK_THROWS_AS(Engine(model, eopts(8, 4)), ember::Error);
    CHECK_THROWS_AS(Engine(model, eopts(2, 8, -1)), ember::Error);
    std::vector<RequestHandle> handles;
    {
        Engine engine(model, eopts(1, 8, 64));
        CHECK(engine.context() == 64);
        ember::Request empty;
        CHECK_THROWS_AS(engine.submit(std::move(empty)), ember::Error);
        ember::Request bad;
        bad.prompt = {1, 5, static_cast<ember::Token>(model.n_vocab())};
        CHECK_THROWS_AS(engine.submit(std::move(bad)), ember::Error);
        ember::Request too_long;
        too_long.prompt.assign(65, 1);
        CHECK_THROWS_AS(engine.submit(std::move(too_long)), ember::Error);
        CHECK(engine.stats().requests_done == 0);
        // One sequence: the first runs without end, the others wait in the queue.
        for (int i = 0; i < 3; ++i) {
            Spec s{engine_test::kPrompts[i], 0, -1, {}};
            handles.push_back(engine.submit(request_for(model, s)));
        }
        handles[1].cancel();  // cancelled while queued
        CHECK(handles[1].wait().stop_reason == StopReason::cancelled);
    }
    for (const auto& h : handles) {
        CHECK(h.done());
        const RequestResult r = h.wait();
        // The first may have reached the end of its context before the engine went away.
        if (r.stop_reason != StopReason::context_full) CHECK(r.status == Status::cancelled);
    }
    // The third waited for the only sequence, unless the first filled its context meanwhile.
    if (handles[0].wait().stop_reason != StopReason::context_full) CHECK(handles[2].wait().tokens.empty());
    CHECK_THROWS_AS(RequestHandle().wait(), ember::Error);
}

// scripts/test.sh runs this case under ThreadSanitizer.
TEST_CASE("engine: submissions from several threads", "[engine][threads]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    // One forward-pass thread: the client threads are what this case is about.
    const int threads = 1;
    const auto all = specs(9, 16);
    std::vector<ember::GenerateResult> want;
    for (const Spec& s : all) want.push_back(reference(model, s));
    Engine engine(model, eopts(6, 24, 256, threads));
    std::vector<std::vector<RequestResult>> got(4);
    std::vector<std::thread> clients;
    for (int t = 0; t < 4; ++t) {
        clients.emplace_back([&, t] {
            std::vector<RequestHandle> mine;
            for (int j = 0; j < 4; ++j) mine.push_back(engine.submit(request_for(model, all[static_cast<std::size_t>(4 * t + j)])));
            if (t == 3) mine[1].cancel();
            for (auto& h : mine) got[static_cast<std::size_t>(t)].push_back(h.wait());
            (void)engine.stats();
        });
    }
    for (auto& c : clients) c.join();
    for (int t = 0; t < 4; ++t) {
        for (int j = 0; j < 4; ++j) {
            CAPTURE(t, j);
            const RequestResult& r = got[static_cast<std::size_t>(t)][static_cast<std::size_t>(j)];
            const auto& w = want[static_cast<std::size_t>(4 * t + j)];
            if (t == 3 && j == 1) {
                CHECK(std::equal(r.tokens.begin(), r.tokens.end(), w.tokens.begin()));
                continue;
            }
            check_equal(r, w);
        }
    }
    CHECK(engine.stats().requests_done == 16);
}

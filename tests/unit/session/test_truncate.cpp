// Session::truncate: dropping the tail of a session and continuing gives bitwise what a fresh
// session given the same tokens gives (edit and regenerate, speculative rollback).
#include <catch2/catch.hpp>

#include "session_test_util.hpp"

using ember::Session;
using ember::Status;
using ember::Token;
using session_test::gopts;
using session_test::sopts;
using session_test::stories;

namespace {

std::vector<Token> concat(std::vector<Token> a, const std::vector<Token>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::vector<Token> first(const std::vector<Token>& v, std::size_t n) { return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n)}; }

}  // namespace

TEST_CASE("truncate then continue equals a fresh run, bitwise", "[truncate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time, there was a little girl named Lily.");
    ember::TokenizeOptions no_bos;
    no_bos.add_bos = false;
    const auto edit = model.tokenize(" She loved to play with her red ball", no_bos);
    for (const int batch : {512, 3}) {
        CAPTURE(batch);
        Session s(model, sopts(256, 1, batch));
        REQUIRE(s.prefill(prompt) == Status::ok);
        auto sampler = session_test::greedy_sampler();
        const auto first_run = s.generate(sampler, gopts(24));
        REQUIRE(first_run.tokens.size() == 24);
        // Keep the prompt and 5 generated tokens, then take another path.
        const int keep = static_cast<int>(prompt.size()) + 5;
        REQUIRE(s.truncate(keep) == Status::ok);
        CHECK(s.n_past() == keep);
        CHECK(s.tokens() == first(concat(prompt, first_run.tokens), static_cast<std::size_t>(keep)));
        {
            Session fresh(model, sopts(256, 1, batch));
            REQUIRE(fresh.prefill(s.tokens()) == Status::ok);
            CHECK(session_test::copy_logits(fresh) == session_test::copy_logits(s));
        }
        REQUIRE(s.prefill(edit) == Status::ok);
        Session fresh(model, sopts(256, 1, batch));
        REQUIRE(fresh.prefill(concat(first(concat(prompt, first_run.tokens), static_cast<std::size_t>(keep)), edit)) ==
                Status::ok);
        CHECK(session_test::copy_logits(fresh) == session_test::copy_logits(s));
        auto a = session_test::greedy_sampler(), b = session_test::greedy_sampler();
        const auto continued = s.generate(a, gopts(20));
        const auto fresh_run = fresh.generate(b, gopts(20));
        CHECK(continued.tokens == fresh_run.tokens);
        CHECK(continued.text == fresh_run.text);
        CHECK(session_test::copy_logits(fresh) == session_test::copy_logits(s));
    }
}

TEST_CASE("truncate takes the logits of the last chunk when logits_all kept them", "[truncate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Tom had a big red truck. He liked to push it in the sand.");
    ember::SessionOptions o = sopts(128);
    o.logits_all = true;
    Session s(model, o);
    REQUIRE(s.prefill(prompt) == Status::ok);
    // The kept row is used: a cancel callback that stops every pass does not matter.
    int polls = 0;
    s.set_cancel_callback([&] { ++polls; return true; });
    const int n = static_cast<int>(prompt.size()) - 4;
    REQUIRE(s.truncate(n) == Status::ok);
    CHECK(polls == 0);
    Session fresh(model, sopts(128));
    REQUIRE(fresh.prefill(first(prompt, static_cast<std::size_t>(n))) == Status::ok);
    CHECK(session_test::copy_logits(fresh) == session_test::copy_logits(s));
    // The kept rows are gone after a truncation: the next one recomputes (and is cancellable).
    CHECK(s.truncate(n - 1) == Status::cancelled);
    CHECK(s.n_past() == n);
    s.set_cancel_callback([&] { ++polls; return false; });
    REQUIRE(s.truncate(n - 1) == Status::ok);
    CHECK(polls > 0);
    Session fresh2(model, sopts(128));
    REQUIRE(fresh2.prefill(first(prompt, static_cast<std::size_t>(n - 1))) == Status::ok);
    CHECK(session_test::copy_logits(fresh2) == session_test::copy_logits(s));
}

TEST_CASE("truncate: bounds, no-op, to zero, and a cancelled recomputation changes nothing", "[truncate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("The sun was shining.");
    Session s(model, sopts(64));
    CHECK(s.truncate(0) == Status::ok);  // empty session
    REQUIRE(s.prefill(prompt) == Status::ok);
    const int n = s.n_past();
    CHECK_THROWS_AS(s.truncate(n + 1), ember::Error);
    CHECK_THROWS_AS(s.truncate(-1), ember::Error);
    const auto before = session_test::copy_logits(s);
    CHECK(s.truncate(n) == Status::ok);
    CHECK(session_test::copy_logits(s) == before);

    s.set_cancel_callback([] { return true; });
    CHECK(s.truncate(2) == Status::cancelled);
    CHECK(s.n_past() == n);
    CHECK(s.tokens() == prompt);
    CHECK(session_test::copy_logits(s) == before);
    s.set_cancel_callback({});
    // The cancelled pass left the cache as it was: decoding continues exactly.
    Session fresh(model, sopts(64));
    REQUIRE(fresh.prefill(prompt) == Status::ok);
    REQUIRE(s.decode(prompt[1]) == Status::ok);
    REQUIRE(fresh.decode(prompt[1]) == Status::ok);
    CHECK(session_test::copy_logits(fresh) == session_test::copy_logits(s));

    REQUIRE(s.truncate(0) == Status::ok);
    CHECK(s.n_past() == 0);
    CHECK(s.tokens().empty());
    CHECK(s.logits().empty());
    CHECK(s.metrics().prompt_tokens == static_cast<std::int64_t>(prompt.size()));
    REQUIRE(s.prefill(prompt) == Status::ok);
    CHECK(session_test::copy_logits(s) == before);
}

// The reusable pieces of speculative decoding: Session::evaluate (one pass, every row's
// logits), prompt lookup, the adaptive draft length.
#include <catch2/catch.hpp>

#include "spec_test_util.hpp"
#include "speculative/draft_length.hpp"
#include "speculative/ngram_lookup.hpp"

using ember::Status;
using ember::Token;
using namespace spec_test;

TEST_CASE("evaluate runs rows in one pass with the logits of each, bitwise those of decoding them one by one", "[speculative][evaluate]") {
    EMBER_REQUIRE_SHARED(kTarget);
    const ember::Model& model = target();
    const auto prompt = model.tokenize("Once upon a time, there was");
    const std::vector<Token> next = {261, 378, 432, 383, 286, 261};
    ember::Session a(model, sopts(64)), b(model, sopts(64));
    REQUIRE(a.prefill(prompt) == Status::ok);
    REQUIRE(b.prefill(prompt) == Status::ok);
    REQUIRE(a.evaluate(next) == Status::ok);
    CHECK(a.n_past() == static_cast<int>(prompt.size() + next.size()));
    for (std::size_t i = 0; i < next.size(); ++i) {
        REQUIRE(b.decode(next[i]) == Status::ok);
        const auto row = a.logits_at(static_cast<int>(i));
        CHECK(std::vector<float>(row.begin(), row.end()) == std::vector<float>(b.logits().begin(), b.logits().end()));
    }
    CHECK(std::vector<float>(a.logits().begin(), a.logits().end()) == std::vector<float>(b.logits().begin(), b.logits().end()));
    CHECK_THROWS_WITH(a.logits_at(6), Catch::Contains("6 rows"));
    // Rolling back into the pass takes its kept rows: no forward pass runs.
    int polls = 0;
    a.set_cancel_callback([&] { ++polls; return false; });
    REQUIRE(a.truncate(static_cast<int>(prompt.size()) + 2) == Status::ok);
    CHECK(polls == 0);
    const auto kept = a.logits();
    ember::Session c(model, sopts(64));
    auto first3 = prompt;
    first3.insert(first3.end(), next.begin(), next.begin() + 2);
    REQUIRE(c.prefill(first3) == Status::ok);
    CHECK(std::vector<float>(kept.begin(), kept.end()) == std::vector<float>(c.logits().begin(), c.logits().end()));
    // After another call the rows are gone.
    REQUIRE(a.decode(next[2]) == Status::ok);
    CHECK_THROWS_WITH(a.logits_at(0), Catch::Contains("evaluate()"));
}

TEST_CASE("evaluate refuses what one pass cannot take", "[speculative][evaluate]") {
    EMBER_REQUIRE_SHARED(kTarget);
    const ember::Model& model = target();
    ember::Session s(model, sopts(16, 4));
    REQUIRE(s.prefill(std::vector<Token>{1, 403, 407, 261, 378, 432, 383, 286, 261, 376}) == Status::ok);
    CHECK(s.evaluate({}) == Status::invalid_input);
    CHECK_THROWS_WITH(s.evaluate(std::vector<Token>{261, 600}), Catch::Contains("token 1 has id 600"));
    CHECK_THROWS_WITH(s.evaluate(std::vector<Token>{261, 261, 261, 261, 261}), Catch::Contains("SessionOptions::batch"));
    REQUIRE(s.evaluate(std::vector<Token>{261, 261, 261, 261}) == Status::ok);
    CHECK_THROWS_WITH(s.evaluate(std::vector<Token>{261, 261, 261}), Catch::Contains("do not fit"));
    CHECK(s.n_past() == 14);
    // Cancelled: nothing changes.
    s.set_cancel_callback([] { return true; });
    CHECK(s.evaluate(std::vector<Token>{261}) == Status::cancelled);
    CHECK(s.n_past() == 14);
}

TEST_CASE("prompt lookup proposes what followed the latest earlier occurrence", "[speculative][lookup]") {
    using ember::speculative::lookup_ngram;
    std::vector<Token> out;
    // ... 5 6 7 8 ... 5 6 -> 7 8 9
    const std::vector<Token> ctx = {1, 5, 6, 7, 8, 9, 2, 3, 5, 6};
    CHECK(lookup_ngram(ctx, 2, 3, out) == 3);
    CHECK(out == std::vector<Token>{7, 8, 9});
    // The latest occurrence wins.
    out.clear();
    const std::vector<Token> twice = {4, 1, 2, 3, 4, 1, 9, 9, 4, 1};
    CHECK(lookup_ngram(twice, 2, 2, out) == 2);
    CHECK(out == std::vector<Token>{9, 9});
    // Longer n-grams first: "2 4 1" occurs once, before "3".
    out.clear();
    const std::vector<Token> longer = {2, 4, 1, 3, 0, 4, 1, 8, 2, 4, 1};
    CHECK(lookup_ngram(longer, 3, 1, out) == 1);
    CHECK(out == std::vector<Token>{3});
    out.clear();
    CHECK(lookup_ngram(longer, 2, 1, out) == 1);
    CHECK(out == std::vector<Token>{8});
    // A repeating pattern continues through the guess itself.
    out.clear();
    const std::vector<Token> cycle = {7, 1, 2, 1, 2};
    CHECK(lookup_ngram(cycle, 2, 5, out) == 5);
    CHECK(out == std::vector<Token>{1, 2, 1, 2, 1});
    out.assign({42});
    const std::vector<Token> run = {3, 3};
    CHECK(lookup_ngram(run, 4, 3, out) == 3);
    CHECK(out == std::vector<Token>{42, 3, 3, 3});  // appends
    // No recurrence, nothing to search, nothing asked.
    out.clear();
    CHECK(lookup_ngram(std::vector<Token>{1, 2, 3, 4}, 3, 4, out) == 0);
    CHECK(lookup_ngram(std::vector<Token>{1}, 3, 4, out) == 0);
    CHECK(lookup_ngram(ctx, 2, 0, out) == 0);
    CHECK(lookup_ngram(ctx, 0, 3, out) == 0);
    CHECK(out.empty());
}

TEST_CASE("the draft length follows the acceptance rate", "[speculative][adaptive]") {
    using ember::speculative::DraftLength;
    DraftLength fixed(6, false, 0.3);
    fixed.record(0, true);
    CHECK(fixed.next() == 6);

    DraftLength lookup(16, true, 0.05);  // cheap guesses
    for (int i = 0; i < 30; ++i) lookup.record(16, false);  // everything accepted
    CHECK(lookup.acceptance() > 0.9);
    CHECK(lookup.next() == 16);
    for (int i = 0; i < 60; ++i) lookup.record(0, true);  // everything rejected
    CHECK(lookup.acceptance() < 0.2);  // the prior keeps it above 0
    CHECK(lookup.next() == 1);

    // A costly draft: fewer guesses at the same acceptance.
    DraftLength cheap(16, true, 0.05), costly(16, true, 0.5);
    for (int i = 0; i < 30; ++i) {
        cheap.record(3, true);
        costly.record(3, true);
    }
    CHECK(cheap.acceptance() == Approx(costly.acceptance()));
    CHECK(cheap.acceptance() == Approx(0.75).margin(0.02));
    CHECK(costly.next() < cheap.next());
    CHECK(costly.next() >= 1);
    cheap.reset();
    CHECK(cheap.acceptance() == Approx(0.75));
}

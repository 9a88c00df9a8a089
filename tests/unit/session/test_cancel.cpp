// Cancellation: a cancelled prefill, decode or generate returns Status::cancelled and leaves the
// session consistent; continuing gives the same logits and tokens as a run never cancelled.
#include <catch2/catch.hpp>

#include "session_test_util.hpp"

using ember::Session;
using ember::Status;
using ember::Token;
using session_test::copy_logits;
using session_test::gopts;
using session_test::sopts;
using session_test::stories;

namespace {

const char* kLongPrompt =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park "
    "with her friends and her big red ball.";

}  // namespace

TEST_CASE("cancel mid-prefill, then continue: same logits as an uncancelled run", "[cancel]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize(kLongPrompt);
    REQUIRE(prompt.size() > 24);
    const int n_layer = static_cast<int>(model.info().n_layer);

    Session ref(model, sopts(128, 1, 8));
    REQUIRE(ref.prefill(prompt) == Status::ok);
    const auto ref_logits = copy_logits(ref);

    Session head(model, sopts(128, 1, 8));
    REQUIRE(head.prefill(std::span(prompt).first(8)) == Status::ok);

    for (const int cancel_at : {1, 3, n_layer + 3, 2 * n_layer + 1}) {
        CAPTURE(cancel_at);
        Session s(model, sopts(128, 1, 8));
        int calls = 0;
        s.set_cancel_callback([&] { return ++calls == cancel_at; });
        REQUIRE(s.prefill(prompt) == Status::cancelled);
        const int chunks_done = (cancel_at - 1) / n_layer;
        CHECK(s.n_past() == 8 * chunks_done);
        CHECK(s.tokens() == std::vector<Token>(prompt.begin(), prompt.begin() + s.n_past()));
        if (chunks_done == 0) {
            CHECK(s.logits().empty());
        } else if (chunks_done == 1) {
            // logits() belong to the last token the session holds.
            CHECK(copy_logits(s) == copy_logits(head));
        }
        s.set_cancel_callback({});
        REQUIRE(s.prefill(std::span(prompt).subspan(static_cast<std::size_t>(s.n_past()))) == Status::ok);
        CHECK(s.tokens() == prompt);
        CHECK(copy_logits(s) == ref_logits);  // same chunk boundaries: bit-identical
    }

    // Against one unchunked pass: equal up to rounding.
    Session one(model, sopts(128, 1, 512));
    REQUIRE(one.prefill(prompt) == Status::ok);
    CHECK(session_test::max_abs_diff(one.logits(), ref_logits) < 1e-4f);
}

TEST_CASE("cancel a decode step: nothing changes; cancel generate: the pending token", "[cancel]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");

    Session ref(model, sopts(128));
    REQUIRE(ref.prefill(prompt) == Status::ok);
    ember::Sampler sr;
    const auto expected = ref.generate(sr, gopts(30)).tokens;
    REQUIRE(expected.size() == 30);

    Session s(model, sopts(128));
    REQUIRE(s.prefill(prompt) == Status::ok);
    const auto before = copy_logits(s);
    s.set_cancel_callback([] { return true; });
    CHECK(s.decode(expected[0]) == Status::cancelled);
    CHECK(s.n_past() == static_cast<int>(prompt.size()));
    CHECK(copy_logits(s) == before);
    s.set_cancel_callback({});

    // Cancel during the decode of the 5th generated token (layer 2 of it).
    const int n_layer = static_cast<int>(model.info().n_layer);
    int calls = 0;
    const int loop_polls = 1;  // generate polls once per token before sampling
    const int cancel_at = 4 * (n_layer + loop_polls) + loop_polls + 2;
    s.set_cancel_callback([&] { return ++calls == cancel_at; });
    ember::Sampler sampler;
    const auto r = s.generate(sampler, gopts(30));
    CHECK(r.stop_reason == ember::StopReason::cancelled);
    CHECK(r.status == Status::cancelled);
    CHECK(r.last_token_pending);
    REQUIRE(r.tokens.size() == 5);
    CHECK(r.tokens == std::vector<Token>(expected.begin(), expected.begin() + 5));
    CHECK(s.n_past() == static_cast<int>(prompt.size()) + 4);
    // Decode the pending token, then continue: the same tokens as the uncancelled run.
    s.set_cancel_callback({});
    REQUIRE(s.decode(r.tokens.back()) == Status::ok);
    const auto rest = s.generate(sampler, gopts(25)).tokens;
    CHECK(rest == std::vector<Token>(expected.begin() + 5, expected.end()));

    // A callback that cancels before sampling: nothing generated.
    s.set_cancel_callback([] { return true; });
    const auto r0 = s.generate(sampler, gopts(5));
    CHECK(r0.tokens.empty());
    CHECK(r0.status == Status::cancelled);
    CHECK_FALSE(r0.last_token_pending);
}

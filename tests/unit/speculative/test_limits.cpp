// Speculative decoding at the edges: a full context (proposals shrink to the room left, then
// generation stops as plain decoding does), the context shift (it happens in plain decode
// steps at the same token as without speculation), and cancellation at every point of a step
// (draft passes and the verification pass): the session then holds what was emitted (the last
// token possibly pending), and continuing gives the plain output.
#include <catch2/catch.hpp>

#include "spec_test_util.hpp"
#include "support/sanitized.hpp"

using ember::Speculator;
using ember::Status;
using ember::StopReason;
using ember::Token;
using namespace spec_test;

namespace {

std::vector<ember::SpeculativeOptions> both_proposers() {
    return {draft_options(draft(), 8, false), lookup_options(2, 8, false), draft_options(draft(), 3, true)};
}

}  // namespace

TEST_CASE("a full context: guesses shrink to the room left and generation stops as plain", "[speculative][limits]") {
    EMBER_REQUIRE_SHARED(kDraft);
    const ember::Model& model = target();
    const auto prompt = model.tokenize("Once upon a time, there was a little girl named Lily.");
    for (const int room : {1, 2, 5, 9, 30}) {
        const int context = static_cast<int>(prompt.size()) + room;
        const Run plain = generate(model, prompt, greedy_options(), gopts(-1), nullptr, sopts(context));
        REQUIRE(plain.result.stop_reason == StopReason::context_full);
        for (const auto& o : both_proposers()) {
            INFO("room " << room << (o.draft ? " draft" : " lookup"));
            Speculator spec(model, o);
            const Run run = generate(model, prompt, greedy_options(), gopts(-1), &spec, sopts(context));
            CHECK(run.result.tokens == plain.result.tokens);
            CHECK(run.result.stop_reason == StopReason::context_full);
            CHECK(run.result.status == Status::context_full);
            CHECK(run.session_tokens.size() == static_cast<std::size_t>(context));
            CHECK(run.logits == plain.logits);
        }
    }
}

TEST_CASE("context shift: speculative output equals plain output through several shifts", "[speculative][limits]") {
    EMBER_REQUIRE_SHARED(kDraft);
    const ember::Model& model = target();
    const auto prompt = model.tokenize("Once upon a time, there was a little girl named Lily.");
    ember::SessionOptions so = sopts(48);
    so.context_shift = true;
    so.n_keep = 4;
    const Run plain = generate(model, prompt, greedy_options(), gopts(160), nullptr, so);
    REQUIRE(plain.metrics.context_shifts >= 3);
    for (const auto& o : both_proposers()) {
        INFO((o.draft ? "draft" : "lookup"));
        Speculator spec(model, o);
        const Run run = generate(model, prompt, greedy_options(), gopts(160), &spec, so);
        CHECK(run.result.tokens == plain.result.tokens);
        CHECK(run.session_tokens == plain.session_tokens);
        CHECK(run.metrics.context_shifts == plain.metrics.context_shifts);
        CHECK(run.logits == plain.logits);
        CHECK(run.metrics.speculative_steps > 0);
    }
}

TEST_CASE("cancellation at any point of a speculative step leaves a session that continues exactly", "[speculative][limits]") {
    EMBER_REQUIRE_SHARED(kDraft);
    const ember::Model& model = target();
    const auto prompt = model.tokenize("Lily and Ben were playing in the garden");
    const int total = 40;
    const Run plain = generate(model, prompt, greedy_options(), gopts(total), nullptr, sopts(256));
    REQUIRE(plain.result.tokens.size() == static_cast<std::size_t>(total));
    for (const auto& o : both_proposers()) {
        // Polls happen between the layers of every pass (target and draft); cancel at each one
        // of the first steps in turn.
        for (int cancel_at = 1; cancel_at <= 60; cancel_at += (o.draft ? 1 : 3) * (ember_test::kSanitized ? 2 : 1)) {
            INFO((o.draft ? "draft" : "lookup") << ", cancelled at poll " << cancel_at);
            Speculator spec(model, o);
            ember::Session s(model, sopts(256));
            ember::Sampler sampler(greedy_options());
            REQUIRE(s.prefill(prompt) == Status::ok);
            int polls = 0;
            s.set_cancel_callback([&] { return ++polls == cancel_at; });
            ember::GenerateOptions g = gopts(total);
            g.speculative = &spec;
            const auto first = s.generate(sampler, g);
            std::vector<Token> emitted = first.tokens;
            if (first.status == Status::ok) {  // finished before the poll
                CHECK(emitted == plain.result.tokens);
                continue;
            }
            REQUIRE(first.status == Status::cancelled);
            CHECK(first.stop_reason == StopReason::cancelled);
            // The session holds the prompt and every emitted token but a pending last one.
            std::vector<Token> held = prompt;
            held.insert(held.end(), emitted.begin(), emitted.end() - (first.last_token_pending ? 1 : 0));
            CHECK(s.tokens() == held);
            s.set_cancel_callback({});
            if (first.last_token_pending) REQUIRE(s.decode(emitted.back()) == Status::ok);
            g.max_tokens = total - static_cast<int>(emitted.size());
            const auto rest = s.generate(sampler, g);
            emitted.insert(emitted.end(), rest.tokens.begin(), rest.tokens.end());
            CHECK(emitted == plain.result.tokens);
            CHECK(s.tokens() == plain.session_tokens);
        }
    }
}

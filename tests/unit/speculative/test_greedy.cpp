// Greedy speculative decoding gives plain greedy decoding's tokens, token for token: with a
// draft model (stories260K-Q4_0 drafting for stories260K F32) and with prompt lookup, on every
// prompt of llama.cpp's reference and on more, at every draft length.
#include <catch2/catch.hpp>

#include "spec_test_util.hpp"
#include "support/sanitized.hpp"

using ember::Speculator;
using ember::StopReason;
using ember::Token;
using namespace spec_test;

namespace {

const std::vector<std::string> kMorePrompts = {
    "Lily and Ben were playing in the garden",
    "The sun was shining. Tom wanted to",
    "Once upon a time, there was a big",
    "A cat sat on the mat. The cat sat on the mat. The cat",
    "Sara had a red ball. She liked to play with her red ball. One day, the red ball",
    "The",
};

struct Proposer {
    const char* name;
    ember::SpeculativeOptions options;
};

std::vector<Proposer> proposers() {
    return {
        {"draft, adaptive, max 8", draft_options(draft(), 8, true)},
        {"draft, always 1", draft_options(draft(), 1, false)},
        {"draft, always 5", draft_options(draft(), 5, false)},
        {"draft, always 16", draft_options(draft(), 16, false)},
        {"lookup 3, adaptive", lookup_options(3, 8, true)},
        {"lookup 1, always 6", lookup_options(1, 6, false)},
        {"lookup 2, always 12", lookup_options(2, 12, false)},
    };
}

}  // namespace

TEST_CASE("greedy with a draft model or prompt lookup gives llama.cpp's reference ids", "[speculative][e2e]") {
    EMBER_REQUIRE_SHARED("reference/stories260K-greedy.txt");
    EMBER_REQUIRE_SHARED(kDraft);
    const auto cases = read_reference();
    REQUIRE(cases.size() >= 4);
    for (const auto& c : cases) {
        const std::string rel = "models/" + c.model;
        REQUIRE(ember_test::has_shared_file(rel));
        const ember::Model& model = load_once(rel.c_str());
        const auto prompt = model.tokenize(c.prompt);
        REQUIRE(prompt.size() < c.ids.size());
        const std::vector<Token> expected(c.ids.begin() + static_cast<std::ptrdiff_t>(prompt.size()), c.ids.end());
        for (const ember::SpeculativeOptions& o : {draft_options(draft()), lookup_options(3)}) {
            INFO(c.model << " '" << c.prompt << "' " << (o.draft ? "draft" : "lookup"));
            Speculator spec(model, o);
            const Run run = generate(model, prompt, greedy_options(), gopts(static_cast<int>(expected.size())), &spec,
                                     sopts(256));
            CHECK(run.result.tokens == expected);
            CHECK(run.result.stop_reason == StopReason::max_tokens);
            CHECK(run.metrics.speculative_steps > 0);
            CHECK(run.metrics.accepted_tokens > 0);
            CHECK(run.metrics.generated_tokens == static_cast<std::int64_t>(expected.size()));
        }
    }
}

TEST_CASE("greedy speculative output equals plain greedy output on more prompts", "[speculative]") {
    EMBER_REQUIRE_SHARED(kDraft);
    const ember::Model& model = target();
    for (const auto& text : ember_test::sanitized_subset(kMorePrompts, 3)) {
        const auto prompt = model.tokenize(text);
        const Run plain = generate(model, prompt, greedy_options(), gopts(150), nullptr, sopts(512));
        REQUIRE(plain.result.tokens.size() == 150);
        for (const Proposer& p : ember_test::sanitized_subset(proposers(), 2)) {
            INFO("'" << text << "' " << p.name);
            Speculator spec(model, p.options);
            const Run run = generate(model, prompt, greedy_options(), gopts(150), &spec, sopts(512));
            CHECK(run.result.tokens == plain.result.tokens);
            CHECK(run.result.text == plain.result.text);
            CHECK(run.session_tokens == plain.session_tokens);
            CHECK(run.logits == plain.logits);  // bitwise: the same next-token distribution
            CHECK(run.metrics.draft_tokens >= run.metrics.accepted_tokens);
            CHECK(spec.stats().accepted == run.metrics.accepted_tokens);
        }
    }
}

TEST_CASE("speculative greedy stops as plain greedy does: max_tokens, stop strings, end of text", "[speculative]") {
    EMBER_REQUIRE_SHARED(kDraft);
    const ember::Model& model = target();
    const auto prompt = model.tokenize("Once upon a time, there was a little girl named Lily.");
    // Penalties and a logit bias: the verification uses the sampler's whole greedy pipeline.
    ember::SamplerOptions penalized = greedy_options();
    penalized.repeat_penalty = 1.3f;
    penalized.logit_bias = {{426, -2.0f}};
    for (const ember::SamplerOptions& sampling : {greedy_options(), penalized}) {
        for (const int max_tokens : ember_test::sanitized_subset(std::vector<int>{0, 1, 2, 3, 7, 8, 9, 33}, 2)) {
            for (const std::vector<std::string>& stop :
                 {std::vector<std::string>{}, {"park"}, {"She "}, {"\n"}, {"Lily", "ball"}}) {
                const Run plain = generate(model, prompt, sampling, gopts(max_tokens, stop), nullptr, sopts(256));
                for (const ember::SpeculativeOptions& o : {draft_options(draft(), 4, false), lookup_options(2, 8, false)}) {
                    INFO("max_tokens " << max_tokens << ", " << stop.size() << " stops, " << (o.draft ? "draft" : "lookup"));
                    Speculator spec(model, o);
                    const Run run = generate(model, prompt, sampling, gopts(max_tokens, stop), &spec, sopts(256));
                    CHECK(run.result.tokens == plain.result.tokens);
                    CHECK(run.result.text == plain.result.text);
                    CHECK(run.result.stop_reason == plain.result.stop_reason);
                    CHECK(run.result.stop_string == plain.result.stop_string);
                    CHECK(run.session_tokens == plain.session_tokens);
                    CHECK(run.logits == plain.logits);
                }
            }
        }
    }
    // Generation to the end of the text (stories260K ends its stories with EOS).
    const auto short_prompt = model.tokenize("The end.");
    const Run plain = generate(model, short_prompt, greedy_options(), gopts(400), nullptr, sopts(512));
    Speculator spec(model, draft_options(draft()));
    const Run run = generate(model, short_prompt, greedy_options(), gopts(400), &spec, sopts(512));
    CHECK(run.result.tokens == plain.result.tokens);
    CHECK(run.result.stop_reason == plain.result.stop_reason);
    CHECK(run.session_tokens == plain.session_tokens);
}

TEST_CASE("one Speculator across the turns of a conversation keeps the draft in step", "[speculative]") {
    EMBER_REQUIRE_SHARED(kDraft);
    const ember::Model& model = target();
    ember::TokenizeOptions no_bos;
    no_bos.add_bos = false;
    const std::vector<std::string> turns = {"Once upon a time", " Then Tom said, \"", " The dog ran to the",
                                            " Lily was happy."};
    ember::Session plain(model, sopts(1024)), fast(model, sopts(1024));
    ember::Sampler a(greedy_options()), b(greedy_options());
    Speculator spec(model, draft_options(draft()));
    for (std::size_t i = 0; i < turns.size(); ++i) {
        const auto tokens = model.tokenize(turns[i], i == 0 ? ember::TokenizeOptions{} : no_bos);
        REQUIRE(plain.prefill(tokens) == ember::Status::ok);
        REQUIRE(fast.prefill(tokens) == ember::Status::ok);
        ember::GenerateOptions g = gopts(60, {"\n"});
        const auto r_plain = plain.generate(a, g);
        g.speculative = &spec;
        const auto r_fast = fast.generate(b, g);
        CHECK(r_fast.tokens == r_plain.tokens);
        CHECK(fast.tokens() == plain.tokens());
        // An edit: the conversation goes back a few tokens (the draft follows on its own).
        if (i == 1) {
            REQUIRE(plain.truncate(plain.n_past() - 5) == ember::Status::ok);
            REQUIRE(fast.truncate(fast.n_past() - 5) == ember::Status::ok);
        }
    }
    CHECK(spec.stats().steps > 0);
}

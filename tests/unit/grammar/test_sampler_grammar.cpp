// The grammar stage of ember::Sampler on a real model (stories260K): constrained generation
// (greedy and seeded) always yields text the grammar accepts, greedy picks the best allowed
// token, the stage order, save/restore, and 100 seeded JSON Schema generations that parse and
// validate.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "ember/grammar.hpp"
#include "grammar_test_util.hpp"
#include "schema_validator.hpp"
#include "support/sanitized.hpp"
#include "support/shared_data.hpp"
#include "unit/session/session_test_util.hpp"

using grammar_test::Match;

namespace {

using session_test::kModel;
using session_test::stories;

ember::SamplerOptions options(float temperature, std::uint64_t seed) {
    ember::SamplerOptions o;
    o.temperature = temperature;
    o.seed = seed;
    return o;
}

ember::Session prompted(const std::string& prompt = "Once upon a time") {
    ember::SessionOptions so;
    so.context = 512;
    so.threads = 1;
    ember::Session s(stories(), so);
    s.prefill(stories().tokenize(prompt));
    return s;
}

ember::GenerateResult generate(ember::Sampler& sampler, int max_tokens, const std::string& prompt = "Once upon a time") {
    ember::Session s = prompted(prompt);
    ember::GenerateOptions g;
    g.max_tokens = max_tokens;
    return s.generate(sampler, g);
}

const char* const kSentence = R"gbnf(
root ::= "Once" (" " word){3,8} "." ("\n" | "")
word ::= [a-z]+ | "Lily" | "Tim"
)gbnf";

}  // namespace

TEST_CASE("grammar sampler: option errors", "[grammar][sampler]") {
    ember::SamplerOptions o;
    o.grammar = "root ::= \"a\"";
    CHECK_THROWS_WITH(ember::Sampler(o), Catch::Contains("Sampler(model, options)"));
    EMBER_REQUIRE_SHARED(kModel);
    o.json_schema = "{}";
    CHECK_THROWS_WITH(ember::Sampler(stories(), o), Catch::Contains("not both"));
    o.json_schema.clear();
    o.grammar = "root ::= \"a\"\nroot ::= x";
    CHECK_THROWS_WITH(ember::Sampler(stories(), o), Catch::Contains("line 2"));
    o.grammar.clear();
    o.json_schema = R"({"type": "strin"})";
    CHECK_THROWS_WITH(ember::Sampler(stories(), o), Catch::Contains("unknown type"));
    o.json_schema.clear();
    ember::Sampler plain(stories(), o);  // a model and no grammar: an ordinary sampler
    CHECK_FALSE(plain.has_grammar());
    CHECK(plain.grammar_complete());
}

TEST_CASE("grammar sampler: generated text always matches the grammar", "[grammar][sampler]") {
    EMBER_REQUIRE_SHARED(kModel);
    for (std::uint64_t seed : {0ull, 1ull, 2ull, 3ull, 4ull, 5ull, 6ull, 7ull}) {
        ember::SamplerOptions o = options(seed == 0 ? 0.0f : 1.0f, seed);
        o.grammar = kSentence;
        ember::Sampler sampler(stories(), o);
        const ember::GenerateResult r = generate(sampler, 120);
        INFO("seed " << seed << ": " << r.text);
        CHECK(r.stop_reason == ember::StopReason::eog);
        CHECK(sampler.grammar_complete());
        CHECK(grammar_test::accepts(kSentence, r.text));
    }
}

TEST_CASE("grammar sampler: greedy takes the best token the grammar allows", "[grammar][sampler]") {
    EMBER_REQUIRE_SHARED(kModel);
    const char* g = "root ::= [A-Z] [a-z ,]{10,40} \".\"";
    ember::SamplerOptions o = options(0.0f, 1);
    o.grammar = g;
    ember::Sampler sampler(stories(), o);
    // A matcher of its own over the model's token texts (from the public API) judges each step.
    const auto n_vocab = static_cast<std::size_t>(stories().n_vocab());
    std::vector<std::string> pieces(n_vocab);
    std::vector<std::uint8_t> eog(n_vocab);
    for (std::size_t i = 0; i < n_vocab; ++i) {
        pieces[i] = stories().token_to_piece(static_cast<ember::Token>(i));
        eog[i] = stories().is_end_of_generation(static_cast<ember::Token>(i)) ? 1 : 0;
    }
    ember::grammar::Matcher judge(std::make_shared<const ember::grammar::Grammar>(ember::grammar::parse_gbnf(g)),
                                  ember::grammar::build_token_trie(pieces, eog));
    ember::Session s = prompted();
    std::string text;
    for (int step = 0; step < 60; ++step) {
        const std::vector<float> logits(s.logits().begin(), s.logits().end());
        const ember::Token t = sampler.sample(logits);
        ember::Token best = -1;  // the highest logit among the allowed tokens
        for (ember::Token c = 0; c < static_cast<ember::Token>(n_vocab); ++c) {
            if (judge.allows(c) && (best < 0 || logits[static_cast<std::size_t>(c)] > logits[static_cast<std::size_t>(best)])) {
                best = c;
            }
        }
        REQUIRE(t == best);
        if (stories().is_end_of_generation(t)) break;
        judge.accept(t);
        text += stories().token_to_piece(t);
        REQUIRE(s.decode(t) == ember::Status::ok);
    }
    INFO(text);
    CHECK(text.size() >= 12);
    CHECK(grammar_test::accepts(g, text));  // and byte by byte
}

TEST_CASE("grammar sampler: sampled candidates are all allowed", "[grammar][sampler]") {
    EMBER_REQUIRE_SHARED(kModel);
    ember::SamplerOptions o = options(1.0f, 42);
    o.top_k = 0;
    o.top_p = 1.0f;
    o.min_p = 0.0f;
    o.grammar = "root ::= (\"the\" | \"a\" | [ .]) +";
    ember::Sampler sampler(stories(), o);
    ember::Session s = prompted();
    auto follower = grammar_test::byte_matcher(o.grammar);
    for (int step = 0; step < 30; ++step) {
        const ember::Token t = sampler.sample(s.logits());
        double sum = 0;
        for (const ember::SampleCandidate& c : sampler.candidates()) {
            sum += c.probability;
            if (stories().is_end_of_generation(c.token)) continue;
            auto probe = follower;
            CHECK(grammar_test::run(probe, stories().token_to_piece(c.token)) != Match::rejected);
        }
        CHECK(sum == Approx(1.0).epsilon(1e-4));
        if (stories().is_end_of_generation(t)) break;
        REQUIRE(grammar_test::run(follower, stories().token_to_piece(t)) != Match::rejected);
        REQUIRE(s.decode(t) == ember::Status::ok);
    }
}

TEST_CASE("grammar sampler: the stage order", "[grammar][sampler]") {
    EMBER_REQUIRE_SHARED(kModel);
    // After top_k = 1, the grammar sees one candidate; when it rejects it, sampling says so.
    ember::SamplerOptions o = options(1.0f, 3);
    o.grammar = "root ::= \"zzz\"";
    o.top_k = 1;
    o.order = {ember::SamplerStage::top_k, ember::SamplerStage::grammar, ember::SamplerStage::temperature};
    ember::Sampler late(stories(), o);
    ember::Session s = prompted();
    CHECK_THROWS_WITH(late.sample(s.logits()), Catch::Contains("allows none of the candidate tokens"));
    // Left out of the order, the grammar still runs first.
    o.order = {ember::SamplerStage::top_k, ember::SamplerStage::temperature};
    ember::Sampler first(stories(), o);
    const ember::Token t = first.sample(s.logits());
    CHECK(stories().token_to_piece(t).substr(0, 1) == "z");
}

TEST_CASE("grammar sampler: save and restore keep the grammar position", "[grammar][sampler]") {
    EMBER_REQUIRE_SHARED(kModel);
    ember::SamplerOptions o = options(1.0f, 9);
    o.grammar = kSentence;
    ember::Sampler sampler(stories(), o);
    ember::Session s = prompted();
    for (int i = 0; i < 4; ++i) {
        const ember::Token t = sampler.sample(s.logits());
        REQUIRE(s.decode(t) == ember::Status::ok);
    }
    const std::vector<std::uint8_t> saved = s.save_state(&sampler);
    ember::GenerateOptions g;
    g.max_tokens = 80;
    const ember::GenerateResult first = s.generate(sampler, g);

    ember::Sampler other(stories(), o);
    ember::Session s2 = prompted("One day");
    s2.restore_state(saved, &other);
    const ember::GenerateResult second = s2.generate(other, g);
    CHECK(first.tokens == second.tokens);
    CHECK(first.text == second.text);

    // A sampler with another grammar, or none, refuses the position.
    ember::SamplerOptions different = o;
    different.grammar = "root ::= \"Once\" [a-z ]*";
    ember::Sampler wrong(stories(), different);
    CHECK_THROWS_WITH(wrong.restore_state(sampler.save_state()), Catch::Contains("another grammar"));
    ember::Sampler none(options(1.0f, 9));
    CHECK_THROWS_WITH(none.restore_state(sampler.save_state()), Catch::Contains("has no grammar"));
    CHECK_THROWS_WITH(sampler.restore_state(none.save_state()), Catch::Contains("holds no grammar position"));
    // Corrupt positions are refused by the checksum or the position checks.
    std::vector<std::uint8_t> bad = sampler.save_state();
    bad[bad.size() - 12] ^= 0x40;
    CHECK_THROWS_AS(sampler.restore_state(bad), ember::Error);

    // reset() starts the grammar again.
    sampler.reset();
    CHECK_FALSE(sampler.grammar_complete());
    const ember::GenerateResult again = generate(sampler, 120);
    CHECK(grammar_test::accepts(kSentence, again.text));
}

TEST_CASE("grammar sampler: 100 seeded generations under a JSON Schema parse and validate", "[grammar][sampler][json_schema]") {
    EMBER_REQUIRE_SHARED(kModel);
    const char* schema = R"({
      "type": "object",
      "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 8},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "mood": {"enum": ["happy", "sad", null, 3]},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]{1,4}$"}, "maxItems": 2},
        "score": {"type": "number", "minimum": -5, "maximum": 5},
        "ok": {"type": "boolean"},
        "pos": {"$ref": "#/$defs/point"}
      },
      "required": ["name", "age", "mood", "pos"],
      "$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer", "minimum": -99, "maximum": 99},
                                                            "y": {"type": "integer", "minimum": 0, "maximum": 9}},
                          "required": ["x", "y"]}}
    })";
    const grammar_test::SchemaValidator validator(grammar_test::ojson::parse(schema));
    ember::SamplerOptions o = options(1.0f, 0);
    o.json_schema = schema;
    int valid = 0, complete = 0, runs = 0;
    std::string first_failure;
    // Every third seed under the sanitizers (ember_test::kSanitized).
    for (std::uint64_t seed = 1; seed <= 100; seed += ember_test::kSanitized ? 3 : 1) {
        ++runs;
        o.seed = seed;
        ember::Sampler sampler(stories(), o);
        const ember::GenerateResult r = generate(sampler, 400, "{");
        complete += r.stop_reason == ember::StopReason::eog;
        std::string why;
        try {
            why = validator.validate(grammar_test::ojson::parse(r.text));
        } catch (const std::exception& e) {
            why = std::string("does not parse: ") + e.what();
        }
        if (why.empty()) ++valid;
        else if (first_failure.empty()) first_failure = "seed " + std::to_string(seed) + ": " + why + "\n" + r.text;
    }
    INFO(first_failure);
    CHECK(runs == (ember_test::kSanitized ? 34 : 100));
    CHECK(complete == runs);
    CHECK(valid == runs);
}

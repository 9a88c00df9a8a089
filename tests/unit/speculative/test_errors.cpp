// Bad speculative setups get a clear ember::Error: a draft model whose vocabulary differs from
// the target's (token texts and types are compared, not only sizes; unused padding tokens are
// allowed), invalid options, a Speculator used with another model's session.
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "spec_test_util.hpp"

using ember::Speculator;
using ember::Token;
using namespace spec_test;

namespace {

struct VocabEdit {
    std::function<void(std::vector<std::string>&, std::vector<float>&, std::vector<std::int32_t>&)> edit;
};

// stories260K with its vocabulary edited; tokens appended get zero rows in token_embd and
// output (both F32 in this file).
ember::Model edited_stories(const VocabEdit& e) {
    const auto f = ember::gguf::File::open(ember_test::shared_file(kTarget).string());
    std::vector<std::string> tokens;
    for (const auto& v : f.get_array("tokenizer.ggml.tokens").items) tokens.emplace_back(v.as_string("token"));
    std::vector<float> scores;
    for (const auto& v : f.get_array("tokenizer.ggml.scores").items) scores.push_back(v.as_f32("score"));
    std::vector<std::int32_t> types;
    for (const auto& v : f.get_array("tokenizer.ggml.token_type").items) types.push_back(static_cast<std::int32_t>(v.as_i64("type")));
    const std::size_t n_before = tokens.size();
    e.edit(tokens, scores, types);
    ember::gguf::Writer w;
    w.copy_metadata(f);
    w.set("tokenizer.ggml.tokens", ember::gguf::MetaValue::strings(tokens));
    w.set("tokenizer.ggml.scores", ember::gguf::MetaValue::f32s(scores));
    w.set("tokenizer.ggml.token_type", ember::gguf::MetaValue::i32s(types));
    if (f.find("llama.vocab_size")) w.set_u32("llama.vocab_size", static_cast<std::uint32_t>(tokens.size()));
    for (const auto& t : f.tensors()) {
        std::vector<std::int64_t> dims(t.ne, t.ne + t.n_dims);
        std::vector<std::uint8_t> data(t.data, t.data + t.n_bytes);
        if ((t.name == "token_embd.weight" || t.name == "output.weight") && tokens.size() != n_before) {
            REQUIRE(t.type == ember::TensorType::F32);
            dims[1] = static_cast<std::int64_t>(tokens.size());
            data.resize(static_cast<std::size_t>(dims[0] * dims[1]) * sizeof(float), 0);
        }
        w.add_tensor(t.name, t.type, dims, std::move(data));
    }
    const auto bytes = w.write_to_bytes();
    ember::ModelOptions o;
    o.threads = 1;
    return ember::Model::load_from_memory(bytes.data(), bytes.size(), o);
}

void pad(std::vector<std::string>& tokens, std::vector<float>& scores, std::vector<std::int32_t>& types, int n,
         std::int32_t type) {
    for (int i = 0; i < n; ++i) {
        tokens.push_back("[PAD" + std::to_string(tokens.size()) + "]");
        scores.push_back(0.0f);
        types.push_back(type);
    }
}

}  // namespace

TEST_CASE("a draft model with another vocabulary is refused, naming the first difference", "[speculative][errors]") {
    EMBER_REQUIRE_SHARED(kTarget);
    const ember::Model& model = target();
    {
        const auto other = edited_stories({[](auto& tokens, auto&, auto&) { tokens[300] = "\xE2\x96\x81zzqx"; }});
        REQUIRE(other.n_vocab() == model.n_vocab());  // same size: only the texts tell
        CHECK_THROWS_WITH(Speculator(model, draft_options(other)),
                          Catch::Contains("token 300") && Catch::Contains("zzqx") && Catch::Contains("vocabulary"));
    }
    {
        const auto other = edited_stories({[](auto&, auto&, auto& types) { types[420] = 4; }});
        CHECK_THROWS_WITH(Speculator(model, draft_options(other)),
                          Catch::Contains("token 420") && Catch::Contains("user-defined") && Catch::Contains("normal"));
    }
    {
        const auto other = edited_stories({[](auto& tokens, auto& scores, auto& types) { pad(tokens, scores, types, 3, 1); }});
        CHECK_THROWS_WITH(Speculator(model, draft_options(other)),
                          Catch::Contains("token 512") && Catch::Contains("only in the draft"));
        // The other way round: the target has the extra tokens.
        CHECK_THROWS_WITH(Speculator(other, draft_options(model)), Catch::Contains("only in the target"));
    }
    {
        const auto other = edited_stories({[](auto& tokens, auto& scores, auto& types) { pad(tokens, scores, types, 200, 5); }});
        CHECK_THROWS_WITH(Speculator(model, draft_options(other)), Catch::Contains("vocabularies of 712 and 512"));
    }
}

TEST_CASE("a draft model with unused padding tokens drafts, and the output is unchanged", "[speculative][errors]") {
    EMBER_REQUIRE_SHARED(kTarget);
    const ember::Model& model = target();
    const auto padded = edited_stories({[](auto& tokens, auto& scores, auto& types) { pad(tokens, scores, types, 8, 5); }});
    REQUIRE(padded.n_vocab() == model.n_vocab() + 8);
    const auto prompt = model.tokenize("Once upon a time");
    const Run plain = generate(model, prompt, greedy_options(), gopts(80), nullptr, sopts(256));
    {
        // The padded draft may guess a padding token (its logit is 0): never accepted.
        Speculator spec(model, draft_options(padded));
        const Run run = generate(model, prompt, greedy_options(), gopts(80), &spec, sopts(256));
        CHECK(run.result.tokens == plain.result.tokens);
    }
    {
        // A padded target: the draft proposes for the shared ids.
        const Run padded_plain = generate(padded, prompt, greedy_options(), gopts(80), nullptr, sopts(256));
        Speculator spec(padded, draft_options(model));
        const Run run = generate(padded, prompt, greedy_options(), gopts(80), &spec, sopts(256));
        CHECK(run.result.tokens == padded_plain.result.tokens);
        CHECK(run.metrics.accepted_tokens > 0);
    }
}

TEST_CASE("speculative options are checked", "[speculative][errors]") {
    EMBER_REQUIRE_SHARED(kDraft);
    const ember::Model& model = target();
    ember::SpeculativeOptions none;
    CHECK_THROWS_WITH(Speculator(model, none), Catch::Contains("set a draft model or lookup_ngram"));
    auto both = draft_options(draft());
    both.lookup_ngram = 2;
    CHECK_THROWS_WITH(Speculator(model, both), Catch::Contains("not both"));
    CHECK_THROWS_WITH(Speculator(model, lookup_options(17)), Catch::Contains("lookup_ngram must be in [0, 16]"));
    CHECK_THROWS_WITH(Speculator(model, lookup_options(-1)), Catch::Contains("lookup_ngram"));
    CHECK_THROWS_WITH(Speculator(model, lookup_options(2, 0)), Catch::Contains("max_draft must be in [1, 64]"));
    CHECK_THROWS_WITH(Speculator(model, lookup_options(2, 65)), Catch::Contains("max_draft"));
    auto threads = draft_options(draft());
    threads.draft_threads = -1;
    CHECK_THROWS_WITH(Speculator(model, threads), Catch::Contains("draft_threads"));

    // A Speculator belongs to its target model.
    Speculator spec(draft(), lookup_options(2));
    ember::Session s(model, sopts(64));
    REQUIRE(s.prefill(model.tokenize("Once")) == ember::Status::ok);
    ember::Sampler sampler;
    ember::GenerateOptions g = gopts(4);
    g.speculative = &spec;
    CHECK_THROWS_WITH(s.generate(sampler, g), Catch::Contains("another model"));

    // The options keep the draft model alive: the caller's handle may go.
    std::optional<ember::Model> temporary = draft();
    Speculator kept(model, draft_options(*temporary));
    temporary.reset();
    REQUIRE(kept.options().draft != nullptr);
    CHECK(kept.options().draft->n_vocab() == model.n_vocab());
}

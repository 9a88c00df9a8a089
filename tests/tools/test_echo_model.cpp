// ember-generate-model --echo: the model repeats its last token, and its quantizations and a
// 2-layer copy (same seed and shape otherwise) agree with it token for token, so a draft model
// made that way has every guess accepted (the speculative-decoding benchmarks use this).
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/generate_model.hpp"
#include "common/quant_mix.hpp"
#include "ember/ember.hpp"

namespace fs = std::filesystem;

namespace {

fs::path echo_model(const std::string& name, const char* type, std::int64_t n_layer) {
    const fs::path dir = fs::temp_directory_path() / ("ember_test_echo_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    ember::tools::GenerateOptions g;
    g.shape = {.n_embd = 128, .n_layer = n_layer, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_vocab = 400, .n_ctx = 256};
    g.type = ember::tools::find_file_type(type);
    g.echo = true;
    g.verbose = false;
    g.threads = 1;
    const fs::path path = dir / name;
    ember::tools::generate_model(g, path.string());
    return path;
}

std::vector<ember::Token> greedy(const ember::Model& m, const std::vector<ember::Token>& prompt, int n,
                                 ember::Speculator* spec = nullptr, ember::Metrics* metrics = nullptr) {
    ember::SessionOptions so;
    so.context = 128;
    so.threads = 1;
    ember::Session s(m, so);
    REQUIRE(s.prefill(prompt) == ember::Status::ok);
    ember::Sampler sampler;
    ember::GenerateOptions g;
    g.max_tokens = n;
    g.speculative = spec;
    const auto r = s.generate(sampler, g);
    if (metrics) *metrics = s.metrics();
    return r.tokens;
}

}  // namespace

TEST_CASE("echo models repeat their last token; quantized and 2-layer copies agree", "[tools][generate][echo]") {
    ember::ModelOptions mo;
    mo.threads = 1;
    const auto target = ember::Model::load(echo_model("echo-q8.gguf", "Q8_0", 6).string(), mo);
    const auto f16 = ember::Model::load(echo_model("echo-f16.gguf", "F16", 6).string(), mo);
    const auto q4 = ember::Model::load(echo_model("echo-q4.gguf", "Q4_0", 6).string(), mo);
    const auto draft = ember::Model::load(echo_model("echo-2l-q4.gguf", "Q4_0", 2).string(), mo);
    for (const std::vector<ember::Token>& prompt :
         {std::vector<ember::Token>{1, 300, 17, 42, 399}, {1, 5, 260, 261, 262, 263, 100}, {1, 77}}) {
        const auto out = greedy(target, prompt, 24);
        CHECK(out == std::vector<ember::Token>(24, prompt.back()));
        CHECK(greedy(f16, prompt, 24) == out);
        CHECK(greedy(q4, prompt, 24) == out);
        CHECK(greedy(draft, prompt, 24) == out);
        // As a draft model every guess is accepted.
        ember::SpeculativeOptions so;
        so.draft = &draft;
        ember::Speculator spec(target, so);
        ember::Metrics m;
        CHECK(greedy(target, prompt, 24, &spec, &m) == out);
        CHECK(m.draft_tokens > 0);
        CHECK(m.accepted_tokens == m.draft_tokens);
    }
    // Not echo: the output weights are random, the model does not repeat.
    ember::tools::GenerateOptions plain;
    plain.shape = {.n_embd = 128, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 256, .n_vocab = 400, .n_ctx = 256};
    plain.verbose = false;
    const fs::path p = fs::temp_directory_path() / ("ember_test_echo_" + std::to_string(::getpid())) / "plain.gguf";
    ember::tools::generate_model(plain, p.string());
    const auto random = ember::Model::load(p.string(), mo);
    CHECK(greedy(random, {1, 300, 17, 42, 399}, 24) != std::vector<ember::Token>(24, 399));
    fs::remove_all(p.parent_path());
}

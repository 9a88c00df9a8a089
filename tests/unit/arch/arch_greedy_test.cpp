// End to end on the architecture files (stories260K rewritten as qwen2, qwen3, phi3, gemma2,
// gemma3): greedy text equals llama.cpp's (reference/arch-greedy.txt). CTest runs this file's
// "[e2e]" cases once per ISA (EMBER_ISA=scalar/avx2/avx512).
#include <catch2/catch.hpp>

#include <cctype>
#include <map>
#include <memory>

#include "arch_reference.hpp"
#include "ember/model.hpp"
#include "ember/sampler.hpp"
#include "ember/session.hpp"

namespace {

const ember::Model& load_arch(const std::string& name) {
    static std::map<std::string, std::unique_ptr<ember::Model>> models;
    auto& m = models[name];
    if (!m) m = std::make_unique<ember::Model>(ember::Model::load(ember_test::shared_file("models/arch/" + name).string()));
    return *m;
}

}  // namespace

TEST_CASE("architecture files: greedy text equals llama.cpp's", "[.][arch][e2e]") {
    EMBER_REQUIRE_SHARED("reference/arch-greedy.txt");
    const auto cases = arch_test::read_greedy_reference();
    REQUIRE(cases.size() >= 10);
    for (const auto& c : cases) {
        INFO(c.model << " prompt '" << c.prompt << "'");
        REQUIRE(ember_test::has_shared_file("models/arch/" + c.model));
        const ember::Model& model = load_arch(c.model);
        ember::Session session(model, {.context = 256, .threads = 1});
        REQUIRE(session.prefill(model.tokenize(c.prompt)) == ember::Status::ok);
        ember::Sampler greedy;
        ember::GenerateOptions options;
        options.max_tokens = c.n;
        const auto result = session.generate(greedy, options);
        // The reference file holds each text with trailing whitespace removed.
        std::string text = c.prompt + result.text;
        while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
        CHECK(text == c.text);
    }
}

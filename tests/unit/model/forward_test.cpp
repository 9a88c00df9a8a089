// The llama forward pass on stories260K (internal API, no tokenizer): greedy continuation of
// llama.cpp's reference prompt ids must reproduce llama.cpp's ids; prefill and token-by-token
// decode must agree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "model/config.hpp"
#include "model/decoder.hpp"
#include "model/weights.hpp"
#include "support/shared_data.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

using ember::model::BatchRow;
using ember::model::ForwardScratch;
using ember::model::KvCache;

struct ReferenceCase {
    std::string prompt, model;
    int n = 0;
    std::vector<int> ids;
};

std::vector<ReferenceCase> read_reference() {
    std::ifstream in(ember_test::shared_file("reference/stories260K-greedy.txt"));
    std::vector<ReferenceCase> cases;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("### PROMPT: ", 0) == 0) {
            cases.push_back({line.substr(12), "", 0, {}});
        } else if (line.rfind("### MODEL: ", 0) == 0 && !cases.empty()) {
            std::istringstream ss(line.substr(11));
            std::string n_field;
            ss >> cases.back().model >> n_field;
            cases.back().n = std::stoi(n_field.substr(2));
        } else if (line.rfind("IDS: ", 0) == 0 && !cases.empty()) {
            std::istringstream ss(line.substr(5));
            for (int id; ss >> id;) cases.back().ids.push_back(id);
        }
    }
    return cases;
}

struct Loaded {
    explicit Loaded(const std::string& path)
        : file(ember::gguf::File::open(path)),
          config(ember::model::ModelConfig::from_gguf(file)),
          weights(ember::model::ModelWeights::from_gguf(file, config)),
          forward(config, weights) {}
    ember::gguf::File file;
    ember::model::ModelConfig config;
    ember::model::ModelWeights weights;
    ember::model::Decoder forward;
};

int argmax(std::span<const float> v) {
    return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Greedy continuation: prefill `prompt` as one batch, then decode one row at a time.
std::vector<int> greedy(const Loaded& m, const std::vector<int>& prompt, int n_total, int threads) {
    const int n_ctx = n_total + 8;
    KvCache cache(m.config, n_ctx);
    ForwardScratch scratch(m.config, m.weights, static_cast<std::int64_t>(prompt.size()), n_ctx, 1, threads);
    KvCache* caches[] = {&cache};
    std::vector<BatchRow> rows;
    for (std::size_t i = 0; i < prompt.size(); ++i) {
        rows.push_back({prompt[i], static_cast<std::int32_t>(i), 0, i + 1 == prompt.size()});
    }
    REQUIRE(m.forward.run(rows, caches, scratch, threads, {}));
    std::vector<int> out = prompt;
    while (static_cast<int>(out.size()) < n_total) {
        const int next = argmax(scratch.logits(0));
        out.push_back(next);
        const BatchRow row{next, static_cast<std::int32_t>(out.size() - 1), 0, true};
        REQUIRE(m.forward.run({&row, 1}, caches, scratch, threads, {}));
    }
    return out;
}

}  // namespace

TEST_CASE("greedy ids match llama.cpp for every reference case", "[model][e2e]") {
    EMBER_REQUIRE_SHARED("reference/stories260K-greedy.txt");
    const auto cases = read_reference();
    REQUIRE(!cases.empty());
    for (const auto& c : cases) {
        const std::string rel = "models/" + c.model;
        if (EMBER_SHARED_MISSING(rel)) continue;
        Loaded m(ember_test::shared_file(rel).string());
        auto tok = ember::tokenizer::Tokenizer::from_gguf(m.file);
        const auto prompt = tok->encode(c.prompt, /*add_bos=*/true, /*parse_special=*/false);
        REQUIRE(prompt.size() < c.ids.size());
        REQUIRE(std::equal(prompt.begin(), prompt.end(), c.ids.begin()));
        // The ids include BOS and the prompt; generation must reproduce the rest exactly.
        const auto got = greedy(m, prompt, static_cast<int>(c.ids.size()), 2);
        INFO(c.model << " prompt '" << c.prompt << "'");
        int first_diff = -1;
        for (std::size_t i = 0; i < c.ids.size(); ++i) {
            if (got[i] != c.ids[i]) { first_diff = static_cast<int>(i); break; }
        }
        INFO("first differing position " << first_diff);
        CHECK(first_diff == -1);
    }
}

TEST_CASE("prefill then decode gives the logits of token-by-token evaluation", "[model]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    for (const char* name : {"models/stories260K.gguf", "models/stories260K-Q8_0.gguf",
                             "models/stories260K-Q4_0.gguf"}) {
        if (EMBER_SHARED_MISSING(name)) continue;
        INFO(name);
        Loaded m(ember_test::shared_file(name).string());
        const std::vector<int> ids = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421};
        const int n_ctx = 32, n_vocab = static_cast<int>(m.weights.output.n_rows());
        // A: every token as its own batch; keep all logits.
        KvCache cache_a(m.config, n_ctx);
        ForwardScratch scratch_a(m.config, m.weights, 1, n_ctx, 1, 2);
        KvCache* caches_a[] = {&cache_a};
        std::vector<std::vector<float>> one_by_one;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            const BatchRow row{ids[i], static_cast<std::int32_t>(i), 0, true};
            REQUIRE(m.forward.run({&row, 1}, caches_a, scratch_a, 2, {}));
            const auto l = scratch_a.logits(0);
            one_by_one.emplace_back(l.begin(), l.end());
        }
        // B: the first 9 as one prefill with logits for every row, then the rest one at a time.
        const std::size_t n_prefill = 9;
        KvCache cache_b(m.config, n_ctx);
        ForwardScratch scratch_b(m.config, m.weights, n_prefill, n_ctx, n_prefill, 2);
        KvCache* caches_b[] = {&cache_b};
        std::vector<BatchRow> rows;
        for (std::size_t i = 0; i < n_prefill; ++i) rows.push_back({ids[i], static_cast<std::int32_t>(i), 0, true});
        REQUIRE(m.forward.run(rows, caches_b, scratch_b, 2, {}));
        float max_diff = 0.0f;
        for (std::size_t i = 0; i < n_prefill; ++i) {
            const auto l = scratch_b.logits(static_cast<std::int64_t>(i));
            for (int v = 0; v < n_vocab; ++v) max_diff = std::max(max_diff, std::abs(l[v] - one_by_one[i][v]));
        }
        for (std::size_t i = n_prefill; i < ids.size(); ++i) {
            const BatchRow row{ids[i], static_cast<std::int32_t>(i), 0, true};
            REQUIRE(m.forward.run({&row, 1}, caches_b, scratch_b, 2, {}));
            const auto l = scratch_b.logits(0);
            for (int v = 0; v < n_vocab; ++v) max_diff = std::max(max_diff, std::abs(l[v] - one_by_one[i][v]));
        }
        CHECK(max_diff <= 1e-4f);
    }
}

TEST_CASE("the cancel callback stops a pass between layers", "[model]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    Loaded m(ember_test::shared_file("models/stories260K.gguf").string());
    KvCache cache(m.config, 8);
    ForwardScratch scratch(m.config, m.weights, 1, 8, 1, 1);
    KvCache* caches[] = {&cache};
    int polls = 0;
    const BatchRow row{1, 0, 0, true};
    CHECK_FALSE(m.forward.run({&row, 1}, caches, scratch, 1, [&] { return ++polls == 3; }));
    CHECK(polls == 3);
}

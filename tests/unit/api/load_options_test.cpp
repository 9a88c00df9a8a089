// ModelOptions::use_mmap and mlock: a model read into memory or locked gives the same logits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "support/shared_data.hpp"

TEST_CASE("Model: use_mmap = false and mlock give the same tokens", "[api][load]") {
    EMBER_REQUIRE_SHARED("models/stories260K-Q4_0.gguf");
    const std::string path = ember_test::shared_file("models/stories260K-Q4_0.gguf").string();
    std::vector<std::vector<float>> logits;
    for (const int mode : {0, 1, 2}) {
        ember::ModelOptions o;
        o.threads = 1;
        o.use_mmap = mode != 1;
        o.mlock = mode == 2;
        CAPTURE(mode);
        std::optional<ember::Model> model;
        try {
            model.emplace(ember::Model::load(path, o));
        } catch (const ember::Error& e) {
            REQUIRE(mode == 2);  // mlock may be refused where RLIMIT_MEMLOCK is low
            CHECK_THAT(e.what(), Catch::Contains("RLIMIT_MEMLOCK"));
            continue;
        }
        ember::Session s(*model);
        REQUIRE(s.prefill(model->tokenize("Once upon a time")) == ember::Status::ok);
        for (int i = 0; i < 8; ++i) {
            const auto l = s.logits();
            const auto best = static_cast<ember::Token>(std::max_element(l.begin(), l.end()) - l.begin());
            REQUIRE(s.decode(best) == ember::Status::ok);
        }
        logits.emplace_back(s.logits().begin(), s.logits().end());
    }
    REQUIRE(logits.size() >= 2);
    for (const auto& l : logits) CHECK(l == logits[0]);
}

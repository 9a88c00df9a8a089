// Sliding-window layers (gemma2, gemma3 files: window 16) through the public API: a session
// whose sliding layers keep only the window computes the same logits, bit for bit, as one whose
// cache holds every position, also across context shifts, save/restore and clone.
#include <catch2/catch.hpp>

#include <map>
#include <span>
#include <vector>

#include "api/model_impl.hpp"
#include "ember/model.hpp"
#include "ember/sampler.hpp"
#include "ember/session.hpp"
#include "support/shared_data.hpp"

namespace {

using ember::Session;
using ember::Status;
using ember::Token;

const ember::Model& gemma(const std::string& arch) {
    static std::map<std::string, ember::Model> models;
    auto it = models.find(arch);
    if (it == models.end()) {
        it = models.emplace(arch, ember::Model::load(ember_test::shared_file("models/arch/stories260K-" + arch + ".gguf").string())).first;
    }
    return it->second;
}

std::vector<float> copy(std::span<const float> s) { return {s.begin(), s.end()}; }

// Token-by-token greedy run of `n` steps after `prompt`; returns the logits of every step.
std::vector<std::vector<float>> run(Session& s, const std::vector<Token>& prompt, int n) {
    std::vector<std::vector<float>> out;
    for (const Token t : prompt) {
        REQUIRE(s.decode(t) == Status::ok);
        out.push_back(copy(s.logits()));
    }
    ember::Sampler greedy;
    for (int i = 0; i < n; ++i) {
        REQUIRE(s.decode(greedy.sample(s.logits())) == Status::ok);
        out.push_back(copy(s.logits()));
    }
    return out;
}

}  // namespace

TEST_CASE("sliding-window sessions equal full-cache sessions bit for bit", "[arch][swa]") {
    for (const char* arch : {"gemma2", "gemma3"}) {
        CAPTURE(arch);
        const std::string file = std::string("models/arch/stories260K-") + arch + ".gguf";
        EMBER_REQUIRE_SHARED(file);
        const auto& model = gemma(arch);
        const auto prompt = model.tokenize("Once upon a time, there was a little dog");
        for (const bool shift : {false, true}) {
            CAPTURE(shift);
            // batch 1: sliding layers keep the window and some slack; batch = context: all rows.
            const int n_ctx = shift ? 40 : 96;
            Session ring(model, {.context = n_ctx, .threads = 1, .batch = 1, .context_shift = shift, .n_keep = 3});
            Session full(model, {.context = n_ctx, .threads = 1, .batch = n_ctx, .context_shift = shift, .n_keep = 3});
            const int steps = shift ? 90 : 80;  // with the shift: several shifts
            const auto a = run(ring, prompt, steps);
            const auto b = run(full, prompt, steps);
            REQUIRE(a.size() == b.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
                CAPTURE(i);
                REQUIRE(a[i] == b[i]);
            }
            if (shift) CHECK(ring.metrics().context_shifts >= 3);
            CHECK(ring.tokens() == full.tokens());
        }
    }
}

TEST_CASE("sliding-window sessions save, restore and clone", "[arch][swa][state]") {
    EMBER_REQUIRE_SHARED("models/arch/stories260K-gemma3.gguf");
    const auto& model = gemma("gemma3");
    const auto prompt = model.tokenize("The little dog");
    Session a(model, {.context = 128, .threads = 1, .batch = 1});
    run(a, prompt, 60);
    const std::vector<std::uint8_t> state = a.save_state();
    Session cloned = a.clone();

    ember::Sampler greedy;
    std::vector<Token> next;
    std::vector<std::vector<float>> expected;
    {
        Session cont = a.clone();
        for (int i = 0; i < 20; ++i) {
            next.push_back(greedy.sample(cont.logits()));
            REQUIRE(cont.decode(next.back()) == Status::ok);
            expected.push_back(copy(cont.logits()));
        }
    }
    // Restored into sessions whose sliding layers hold other row counts (batch 4, all rows).
    for (const int batch : {1, 4, 128}) {
        CAPTURE(batch);
        Session b(model, {.context = 128, .threads = 1, .batch = batch});
        b.restore_state(state);
        CHECK(b.tokens() == a.tokens());
        for (std::size_t i = 0; i < next.size(); ++i) {
            REQUIRE(b.decode(next[i]) == Status::ok);
            REQUIRE(copy(b.logits()) == expected[i]);
        }
    }
    for (std::size_t i = 0; i < next.size(); ++i) {
        REQUIRE(cloned.decode(next[i]) == Status::ok);
        REQUIRE(copy(cloned.logits()) == expected[i]);
    }
    // A session that pins more positions than the saved one kept cannot take the state.
    Session pinned(model, {.context = 128, .threads = 1, .batch = 1, .context_shift = true, .n_keep = 8});
    CHECK_THROWS_WITH(pinned.restore_state(state), Catch::Contains("sliding window"));
}

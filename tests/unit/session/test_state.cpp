// Session state: save/restore (bytes and file) mid-generation continues identically; corrupt,
// truncated and mismatched states are ember::Error and leave the session and sampler unchanged.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "session_test_util.hpp"

using ember::Session;
using ember::Status;
using ember::Token;
using session_test::gopts;
using session_test::seeded;
using session_test::sopts;
using session_test::stories;

TEST_CASE("state: save mid-generation, restore elsewhere, identical continuation", "[state]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    Session a(model, sopts(256));
    auto sa = seeded(42);
    REQUIRE(a.prefill(model.tokenize("Once upon a time")) == Status::ok);
    a.generate(sa, gopts(20));
    const std::vector<std::uint8_t> state = a.save_state(&sa);
    const auto tokens_at_save = a.tokens();
    const auto cont = a.generate(sa, gopts(30)).tokens;
    REQUIRE(cont.size() == 30);

    // Another session (smaller context that still fits) and a sampler with another seed.
    Session b(model, sopts(128));
    auto sb = seeded(7);
    b.restore_state(state, &sb);
    CHECK(b.tokens() == tokens_at_save);
    CHECK(b.n_past() == static_cast<int>(tokens_at_save.size()));
    CHECK(b.generate(sb, gopts(30)).tokens == cont);

    // Back into the first session, after it moved on.
    a.restore_state(state, &sa);
    CHECK(a.generate(sa, gopts(30)).tokens == cont);

    // Through a file.
    const auto path = std::filesystem::temp_directory_path() / "ember_session_state_test.bin";
    a.restore_state(state, &sa);
    a.save_state_file(path.string(), &sa);
    Session c(model, sopts(256));
    auto sc = seeded(1);
    c.restore_state_file(path.string(), &sc);
    CHECK(c.generate(sc, gopts(30)).tokens == cont);
    std::filesystem::remove(path);
    CHECK_THROWS_AS(c.restore_state_file(path.string(), &sc), ember::Error);

    // Only the used positions are stored.
    CHECK(state.size() < 256u * 4u * static_cast<std::size_t>(model.info().n_layer * 2 *
                                                            model.info().n_embd));
    // Without a sampler: the session alone; greedy continuation identical.
    const auto plain = a.save_state();
    Session d(model, sopts(256));
    d.restore_state(plain);
    ember::Sampler g1, g2;
    a.restore_state(plain);
    CHECK(d.generate(g1, gopts(20)).tokens == a.generate(g2, gopts(20)).tokens);
    // Asking for a sampler state that is not there is an error.
    auto se = seeded(3);
    CHECK_THROWS_AS(d.restore_state(plain, &se), ember::Error);

    // An empty session round-trips, and reset() empties.
    Session e(model, sopts(64));
    const auto empty = e.save_state();
    d.restore_state(empty);
    CHECK(d.n_past() == 0);
    CHECK(d.logits().empty());
    a.reset();
    CHECK(a.n_past() == 0);
    CHECK(a.tokens().empty());
    CHECK(a.logits().empty());
    CHECK(a.metrics().generated_tokens == 0);
}

TEST_CASE("state: corrupt, truncated or mismatched bytes are ember::Error, nothing changes", "[state]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    Session a(model, sopts(128));
    auto sa = seeded(42);
    REQUIRE(a.prefill(model.tokenize("Once upon a time")) == Status::ok);
    a.generate(sa, gopts(25));
    const auto state = a.save_state(&sa);

    Session target(model, sopts(128));
    REQUIRE(target.prefill(model.tokenize("The little dog")) == Status::ok);
    const auto target_tokens = target.tokens();
    const auto target_logits = session_test::copy_logits(target);
    auto sampler = seeded(5);
    const auto sampler_before = sampler.save_state();
    auto unchanged = [&] {
        return target.tokens() == target_tokens && session_test::copy_logits(target) == target_logits &&
               sampler.save_state() == sampler_before;
    };

    // Truncated at every 97th byte (and at the last byte).
    int n_checked = 0;
    for (std::size_t len = 0; len < state.size(); len += 97) {
        CHECK_THROWS_AS(target.restore_state(std::span(state).first(len), &sampler), ember::Error);
        ++n_checked;
    }
    CHECK_THROWS_AS(target.restore_state(std::span(state).first(state.size() - 1), &sampler), ember::Error);
    CHECK(n_checked > 10);
    CHECK(unchanged());

    // A byte flipped anywhere (every 97th, plus every byte of the header).
    for (std::size_t i = 0; i < state.size(); i += (i < 80 ? 1 : 97)) {
        auto bad = state;
        bad[i] ^= 0x5a;
        CHECK_THROWS_AS(target.restore_state(bad, &sampler), ember::Error);
    }
    CHECK(unchanged());
    // Extra bytes at the end.
    auto longer = state;
    longer.push_back(0);
    CHECK_THROWS_AS(target.restore_state(longer, &sampler), ember::Error);
    CHECK(unchanged());

    // A context too small for the saved tokens.
    Session small(model, sopts(16));
    CHECK_THROWS_WITH(small.restore_state(state), Catch::Contains("context"));
    // Another model with the same shapes (other quantization: other metadata hash).
    const std::string other = "models/stories260K-Q8_0.gguf";
    if (!EMBER_SHARED_MISSING(other)) {
        ember::ModelOptions mo;
        mo.threads = 1;
        const auto q8 = ember::Model::load(ember_test::shared_file(other).string(), mo);
        Session qs(q8, sopts(128));
        CHECK_THROWS_WITH(qs.restore_state(state), Catch::Contains("another model"));
        CHECK(qs.n_past() == 0);
        // And the other way round.
        REQUIRE(qs.prefill(q8.tokenize("Once")) == Status::ok);
        CHECK_THROWS_AS(target.restore_state(qs.save_state()), ember::Error);
        CHECK(unchanged());
    }
    // Garbage and a wrong magic.
    std::vector<std::uint8_t> junk(4096, 0xab);
    CHECK_THROWS_WITH(target.restore_state(junk), Catch::Contains("magic"));
    CHECK_THROWS_AS(target.restore_state({}), ember::Error);
    // A file that is not a state.
    const auto path = std::filesystem::temp_directory_path() / "ember_session_junk.bin";
    { std::ofstream(path, std::ios::binary) << "not a session"; }
    CHECK_THROWS_WITH(target.restore_state_file(path.string()), Catch::Contains(path.string()));
    std::filesystem::remove(path);
    CHECK(unchanged());

    // The untouched state still restores.
    target.restore_state(state, &sampler);
    CHECK(target.tokens() == a.tokens());
}

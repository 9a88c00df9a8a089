// SessionOptions::kv_type: a session storing keys and values as F16 keeps every guarantee of an
// F32 one (a lone F16 session equals itself after truncate, save/restore), and generates text
// close to it.
#include <catch2/catch.hpp>

#include "session_test_util.hpp"

using ember::KvType;
using ember::Session;
using ember::Status;
using session_test::gopts;
using session_test::stories;

namespace {

ember::SessionOptions f16_opts(int context, int batch = 512) {
    auto o = session_test::sopts(context, 1, batch);
    o.kv_type = KvType::f16;
    return o;
}

}  // namespace

TEST_CASE("F16 KV cache: truncate then continue equals a fresh F16 run, bitwise", "[kv][truncate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time, there was a little girl named Lily.");
    Session s(model, f16_opts(256, 5));
    REQUIRE(s.prefill(prompt) == Status::ok);
    auto greedy = session_test::greedy_sampler();
    const auto first_run = s.generate(greedy, gopts(30));
    const int keep = static_cast<int>(prompt.size()) + 3;  // inside a page: the rest is dropped
    REQUIRE(s.truncate(keep) == Status::ok);
    Session fresh(model, f16_opts(256, 5));
    REQUIRE(fresh.prefill(s.tokens()) == Status::ok);
    CHECK(session_test::copy_logits(fresh) == session_test::copy_logits(s));
    auto a = session_test::greedy_sampler(), b = session_test::greedy_sampler();
    CHECK(s.generate(a, gopts(20)).tokens == fresh.generate(b, gopts(20)).tokens);
    CHECK(session_test::copy_logits(fresh) == session_test::copy_logits(s));

    // F16 greedy text starts as F32's (the logits move by ~1e-3).
    Session f32(model, session_test::sopts(256));
    REQUIRE(f32.prefill(prompt) == Status::ok);
    auto g = session_test::greedy_sampler();
    const auto want = f32.generate(g, gopts(30)).tokens;
    CHECK(std::equal(want.begin(), want.begin() + 10, first_run.tokens.begin()));
}

TEST_CASE("F16 KV cache: save, restore elsewhere, identical continuation", "[kv][state]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    Session a(model, f16_opts(256));
    REQUIRE(a.prefill(model.tokenize("Once upon a time")) == Status::ok);
    auto greedy = session_test::greedy_sampler();
    a.generate(greedy, gopts(21));
    const std::vector<std::uint8_t> state = a.save_state();
    const auto cont = a.generate(greedy, gopts(25)).tokens;
    Session b(model, f16_opts(128));
    b.restore_state(state);
    auto g2 = session_test::greedy_sampler();
    CHECK(b.generate(g2, gopts(25)).tokens == cont);
    // States hold F32 rows: an F32 session takes an F16 session's state.
    Session c(model, session_test::sopts(128));
    c.restore_state(state);
    CHECK(c.n_past() == b.n_past() - 25);
}

// Context shift: RoPE re-rotation, shifted-cache logits against a fresh recompute of the kept
// tokens at their new positions, generation past a small context, prefill that needs shifts.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <cctype>

#include "api/model_impl.hpp"
#include "model/context_shift.hpp"
#include "session_test_util.hpp"

using ember::Session;
using ember::Status;
using ember::Token;
using session_test::gopts;
using session_test::stories;

namespace {

ember::SessionOptions shift_opts(int context, int n_keep, int batch = 512) {
    ember::SessionOptions o = session_test::sopts(context, 1, batch);
    o.context_shift = true;
    o.n_keep = n_keep;
    return o;
}

float logit_range(std::span<const float> l) {
    return *std::max_element(l.begin(), l.end()) - *std::min_element(l.begin(), l.end());
}

std::ptrdiff_t argmax(std::span<const float> l) {
    return std::max_element(l.begin(), l.end()) - l.begin();
}

}  // namespace

TEST_CASE("rope: rotating by -d moves a key from position p to p - d", "[shift]") {
    const std::int64_t n_heads = 3, head_dim = 16;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (const std::int64_t n_rot : {16, 8}) {
        for (const auto style : {ember::model::RopeStyle::normal, ember::model::RopeStyle::neox})
        for (const bool factors : {false, true}) {
            ember::model::RopeParams rope;
            rope.style = style;
            rope.n_rot = n_rot;
            std::vector<float> ff;
            if (factors) {
                for (std::int64_t i = 0; i < n_rot / 2; ++i) ff.push_back(1.0f + 0.5f * static_cast<float>(i));
            }
            std::vector<float> raw(static_cast<std::size_t>(n_heads * head_dim));
            for (float& x : raw) x = u(rng);
            std::vector<float> cs(static_cast<std::size_t>(n_rot));
            for (const auto& [p, d] : {std::pair{40, 20}, {63, 31}, {1000, 500}, {7, 7}}) {
                auto at_p = raw, at_new = raw;
                ember::model::rope_angles(cs.data(), p, rope, ff);
                ember::model::rope_apply(at_p.data(), n_heads, head_dim, n_rot, style, cs.data());
                ember::model::rope_angles(cs.data(), -d, rope, ff);
                ember::model::rope_apply(at_p.data(), n_heads, head_dim, n_rot, style, cs.data());
                ember::model::rope_angles(cs.data(), p - d, rope, ff);
                ember::model::rope_apply(at_new.data(), n_heads, head_dim, n_rot, style, cs.data());
                CHECK(session_test::max_abs_diff(at_p, at_new) < 1e-3f);
                // Values past n_rot are untouched.
                for (std::int64_t h = 0; h < n_heads; ++h) {
                    for (std::int64_t i = n_rot; i < head_dim; ++i) {
                        const auto k = static_cast<std::size_t>(h * head_dim + i);
                        CHECK(at_p[k] == raw[k]);
                    }
                }
            }
        }
    }
    CHECK(ember::model::context_shift_discard(64, 1) == 31);
    CHECK(ember::model::context_shift_discard(64, 0) == 32);
    CHECK(ember::model::context_shift_discard(5, 4) == 1);
    CHECK(ember::model::context_shift_discard(4, 4) == 0);
}

TEST_CASE("context shift: shifted-cache logits match a fresh recompute of the kept tokens", "[shift]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");
    for (const int n_keep : {0, 1, 5}) {
        CAPTURE(n_keep);
        Session s(model, shift_opts(64, n_keep));
        REQUIRE(s.prefill(prompt) == Status::ok);
        ember::Sampler sampler;
        while (s.n_past() < 64) REQUIRE(s.decode(sampler.sample(s.logits())) == Status::ok);
        const auto before = s.tokens();
        const Token next = sampler.sample(s.logits());
        REQUIRE(s.decode(next) == Status::ok);  // shifts, then runs `next`
        CHECK(s.metrics().context_shifts == 1);
        const int n_discard = (64 - n_keep) / 2;
        CHECK(s.n_past() == 64 - n_discard + 1);
        std::vector<Token> kept(before.begin(), before.begin() + n_keep);
        kept.insert(kept.end(), before.begin() + n_keep + n_discard, before.end());
        kept.push_back(next);
        CHECK(s.tokens() == kept);

        // Fresh session: the kept tokens at their new positions. The kept tokens' deeper-layer
        // entries still carry what they saw of the dropped tokens, so this is an approximation
        // (llama.cpp's too): same top token, logits within a few percent of their range.
        Session fresh(model, session_test::sopts(64));
        REQUIRE(fresh.prefill(kept) == Status::ok);
        const float diff = session_test::max_abs_diff(s.logits(), fresh.logits());
        CAPTURE(diff);
        CHECK(diff < 0.1f * logit_range(fresh.logits()));
        CHECK(argmax(s.logits()) == argmax(fresh.logits()));
        // And the next steps stay close.
        for (int i = 0; i < 8; ++i) {
            const Token t = sampler.sample(fresh.logits());
            REQUIRE(s.decode(t) == Status::ok);
            REQUIRE(fresh.decode(t) == Status::ok);
            CHECK(session_test::max_abs_diff(s.logits(), fresh.logits()) < 0.1f * logit_range(fresh.logits()));
        }
    }
}

TEST_CASE("context shift: generation goes on past a small context with sensible text", "[shift]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");
    Session s(model, shift_opts(64, 1));
    REQUIRE(s.prefill(prompt) == Status::ok);
    ember::SamplerOptions so;
    so.temperature = 0.8f;
    so.seed = 42;
    ember::Sampler sampler(so);
    const auto r = s.generate(sampler, gopts(300));
    CHECK(r.status == Status::ok);
    if (r.stop_reason == ember::StopReason::eog) WARN("stopped at end of generation after " << r.tokens.size());
    CHECK(r.tokens.size() > 64);
    CHECK(s.metrics().context_shifts >= 1);
    CHECK(s.n_past() <= 64);
    CHECK(s.tokens().front() == prompt.front());  // BOS kept
    // Sensible: mostly letters and spaces, many distinct words, no long single-token loops.
    std::size_t letters = 0;
    for (char ch : r.text) letters += (std::isalpha(static_cast<unsigned char>(ch)) || ch == ' ') ? 1 : 0;
    CHECK(static_cast<double>(letters) > 0.85 * static_cast<double>(r.text.size()));
    std::set<std::string> words;
    std::istringstream in(r.text);
    for (std::string w; in >> w;) words.insert(w);
    CHECK(words.size() > 30);
    INFO(r.text);
    // The tail after several shifts has the same character as the start (stories260K repeats
    // phrases, but keeps making words).
    const std::string tail = r.text.substr(r.text.size() / 2);
    std::set<std::string> tail_words;
    std::istringstream tin(tail);
    for (std::string w; tin >> w;) tail_words.insert(w);
    CHECK(tail_words.size() > 15);

    // Without shift the same setup stops at the context.
    Session plain(model, session_test::sopts(64));
    REQUIRE(plain.prefill(prompt) == Status::ok);
    ember::Sampler sampler2(so);
    const auto r2 = plain.generate(sampler2, gopts(300));
    CHECK(r2.stop_reason == ember::StopReason::context_full);
    // Up to the first shift both generated the same tokens.
    const std::size_t n_before = static_cast<std::size_t>(64 - static_cast<int>(prompt.size()));
    REQUIRE(r.tokens.size() >= n_before);
    CHECK(std::equal(r2.tokens.begin(), r2.tokens.end(), r.tokens.begin()));
}

TEST_CASE("context shift: prefill that needs shifts; too long prompts throw before any work", "[shift]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto text = model.tokenize(
        "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
        "One day, she saw a big, red ball. She wanted to play with it.");
    REQUIRE(text.size() > 40);
    Session s(model, shift_opts(48, 2, 16));
    REQUIRE(s.prefill(std::span(text).first(40)) == Status::ok);
    const auto tail = std::span(text).subspan(20, 20);
    REQUIRE(s.prefill(tail) == Status::ok);  // 40 + 20 > 48: shifts first
    CHECK(s.metrics().context_shifts >= 1);
    CHECK(s.n_past() <= 48);
    CHECK(static_cast<int>(s.tokens().size()) == s.n_past());
    CHECK(std::equal(tail.begin(), tail.end(), s.tokens().end() - 20));
    CHECK(s.tokens()[0] == text[0]);
    CHECK(s.tokens()[1] == text[1]);

    // More than context - n_keep tokens can never fit: ember::Error, nothing changed.
    const auto before = s.tokens();
    std::vector<Token> too_long(47, text[5]);
    CHECK_THROWS_AS(s.prefill(too_long), ember::Error);
    CHECK(s.tokens() == before);
    // Invalid options.
    CHECK_THROWS_AS(Session(model, shift_opts(48, 48)), ember::Error);
    CHECK_THROWS_AS(Session(model, shift_opts(48, -1)), ember::Error);
    // Without shift, a prompt longer than the room left is an error before any work.
    Session plain(model, session_test::sopts(48));
    REQUIRE(plain.prefill(std::span(text).first(40)) == Status::ok);
    CHECK_THROWS_AS(plain.prefill(std::span(text).first(9)), ember::Error);
    CHECK(plain.n_past() == 40);
}

TEST_CASE("context shift on the cache: layer-0 keys equal a fresh pass at the new positions", "[shift]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto& impl = *ember::detail::ModelAccess::impl(model);
    const auto& c = impl.config;
    // 64 tokens: a prompt and its greedy continuation.
    Session s(model, session_test::sopts(64));
    REQUIRE(s.prefill(model.tokenize("Once upon a time")) == Status::ok);
    ember::Sampler greedy;
    while (s.n_past() < 64) REQUIRE(s.decode(greedy.sample(s.logits())) == Status::ok);
    const std::vector<Token> all = s.tokens();

    auto run = [&](ember::model::KvCache& cache, std::span<const Token> toks, int pos0,
                   ember::model::ForwardScratch& scratch) {
        std::vector<ember::model::BatchRow> rows;
        for (std::size_t i = 0; i < toks.size(); ++i) {
            rows.push_back({toks[i], pos0 + static_cast<std::int32_t>(i), 0, i + 1 == toks.size()});
        }
        ember::model::KvCache* caches[] = {&cache};
        REQUIRE(impl.forward.run(rows, caches, scratch, 1, {}));
        const auto l = scratch.logits(0);
        return std::vector<float>(l.begin(), l.end());
    };
    ember::model::ForwardScratch scratch(c, impl.weights, 64, 64, 1, 1);
    ember::model::KvCache full(c, 64);
    run(full, all, 0, scratch);

    for (const int n_keep : {0, 1, 4}) {
        CAPTURE(n_keep);
        const int n_discard = (64 - n_keep) / 2, n_left = 64 - n_discard;
        std::vector<Token> kept(all.begin(), all.begin() + n_keep);
        kept.insert(kept.end(), all.begin() + n_keep + n_discard, all.end());
        REQUIRE(static_cast<int>(kept.size()) == n_left);

        ember::model::KvCache shifted = full, moved = full, fresh(c, 64);
        std::vector<float> cs(static_cast<std::size_t>(2 * c.n_rot() + c.n_embd_kv()));
        ember::model::shift_context(shifted, c, impl.weights.rope_factors(64, c), 64, n_keep, n_discard, cs);
        REQUIRE(moved.move_down(n_keep + n_discard, n_keep, n_left - n_keep));  // no re-rotation
        run(fresh, kept, 0, scratch);

        // Layer 0 depends on the token alone: keys equal up to rounding, values exactly.
        float k_diff = 0.0f, k_diff_moved = 0.0f;
        for (int p = 0; p < n_left; ++p) {
            const auto n = static_cast<std::size_t>(c.n_embd_kv());
            // F32 caches: values read back exactly, keys through the cache.
            std::vector<float> ks(n), km(n), kf(n), vs(n), vf(n);
            shifted.load_keys(0, p, ks.data());
            moved.load_keys(0, p, km.data());
            fresh.load_keys(0, p, kf.data());
            k_diff = std::max(k_diff, session_test::max_abs_diff(ks, kf));
            k_diff_moved = std::max(k_diff_moved, session_test::max_abs_diff(km, kf));
            shifted.load_values(0, p, vs.data());
            fresh.load_values(0, p, vf.data());
            CHECK(vs == vf);
        }
        CAPTURE(k_diff, k_diff_moved);
        CHECK(k_diff < 1e-4f);
        CHECK(k_diff_moved > 0.05f);  // the rotation matters

        // The next token through the shifted cache is closer to the fresh pass than through the
        // merely moved one.
        const Token next = all.back();
        const auto l_shift = run(shifted, std::span(&next, 1), n_left, scratch);
        const auto l_moved = run(moved, std::span(&next, 1), n_left, scratch);
        const auto l_fresh = run(fresh, std::span(&next, 1), n_left, scratch);
        const float d_shift = session_test::max_abs_diff(l_shift, l_fresh);
        const float d_moved = session_test::max_abs_diff(l_moved, l_fresh);
        CAPTURE(d_shift, d_moved);
        CHECK(d_shift < d_moved);
        CHECK(argmax(l_shift) == argmax(l_fresh));
    }
}

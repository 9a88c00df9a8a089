// RoPE: NEOX against normal pairing, and the angles of plain, linear, YaRN and LongRoPE scaling
// against values derived here in double precision from the published formulas (YaRN: Peng et
// al. 2023 and its reference implementation's linear ramp over pair indices; LongRoPE: per-pair
// divisors chosen by context, with Phi-3's attention factor on cos/sin).
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "config_test_util.hpp"
#include "model/config.hpp"
#include "model/rope.hpp"
#include "model/weights.hpp"

using ember::model::RopeParams;
using ember::model::RopeStyle;

namespace {

std::vector<float> random_vector(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

double inv_freq(std::int64_t i, std::int64_t n_rot, double base) {
    return std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(n_rot));
}

}  // namespace

TEST_CASE("NEOX RoPE rotates the halves of a head as normal RoPE rotates adjacent pairs", "[rope]") {
    const std::int64_t n_heads = 3, head_dim = 16;
    for (const std::int64_t n_rot : {16, 8}) {
        RopeParams p;
        p.n_rot = n_rot;
        std::vector<float> cs(static_cast<std::size_t>(n_rot));
        ember::model::rope_angles(cs.data(), 37, p, {});
        const auto x = random_vector(static_cast<std::size_t>(n_heads * head_dim), 3);
        // perm: NEOX pair (i, i + n_rot/2) -> adjacent pair (2i, 2i+1); the rest stays.
        auto perm = x;
        for (std::int64_t h = 0; h < n_heads; ++h) {
            for (std::int64_t i = 0; i < n_rot / 2; ++i) {
                perm[static_cast<std::size_t>(h * head_dim + 2 * i)] = x[static_cast<std::size_t>(h * head_dim + i)];
                perm[static_cast<std::size_t>(h * head_dim + 2 * i + 1)] = x[static_cast<std::size_t>(h * head_dim + i + n_rot / 2)];
            }
        }
        auto neox = x;
        ember::model::rope_apply(neox.data(), n_heads, head_dim, n_rot, RopeStyle::neox, cs.data());
        ember::model::rope_apply(perm.data(), n_heads, head_dim, n_rot, RopeStyle::normal, cs.data());
        for (std::int64_t h = 0; h < n_heads; ++h) {
            for (std::int64_t i = 0; i < n_rot / 2; ++i) {
                CHECK(neox[static_cast<std::size_t>(h * head_dim + i)] == perm[static_cast<std::size_t>(h * head_dim + 2 * i)]);
                CHECK(neox[static_cast<std::size_t>(h * head_dim + i + n_rot / 2)] == perm[static_cast<std::size_t>(h * head_dim + 2 * i + 1)]);
            }
            for (std::int64_t i = n_rot; i < head_dim; ++i) {
                CHECK(neox[static_cast<std::size_t>(h * head_dim + i)] == x[static_cast<std::size_t>(h * head_dim + i)]);
            }
        }
        // And NEOX is not the normal rotation.
        auto normal = x;
        ember::model::rope_apply(normal.data(), n_heads, head_dim, n_rot, RopeStyle::normal, cs.data());
        CHECK(normal != neox);
    }
}

TEST_CASE("RoPE angles without scaling and with linear scaling", "[rope]") {
    RopeParams p;
    p.n_rot = 64;
    p.freq_base = 500000.0f;
    std::vector<float> cs(64);
    for (const float scale : {1.0f, 0.25f}) {
        p.freq_scale = scale;
        for (const std::int64_t pos : {0, 1, 17, 1000}) {
            ember::model::rope_angles(cs.data(), pos, p, {});
            for (std::int64_t i = 0; i < 32; ++i) {
                const double t = static_cast<double>(pos) * scale * inv_freq(i, 64, 500000.0);
                CHECK(cs[static_cast<std::size_t>(2 * i)] == Approx(std::cos(t)).margin(2e-4));
                CHECK(cs[static_cast<std::size_t>(2 * i + 1)] == Approx(std::sin(t)).margin(2e-4));
            }
        }
    }
}

TEST_CASE("YaRN: config from rope.scaling keys; angles and magnitude match the formula", "[rope][config]") {
    auto w = model_test::small_model_keys("llama");
    w.set_u32("llama.embedding_length", 512);  // head size 64
    w.set_string("llama.rope.scaling.type", "yarn");
    w.set_f32("llama.rope.scaling.factor", 4.0f);
    w.set_u32("llama.rope.scaling.original_context_length", 4096);
    w.set_f32("llama.rope.freq_base", 1000000.0f);
    const auto file = model_test::load(w);
    const auto c = ember::model::ModelConfig::from_gguf(file);
    REQUIRE(c.rope.n_rot == 64);
    CHECK(c.rope.ext_factor == 1.0f);
    CHECK(c.rope.freq_scale == 0.25f);

    // Independent derivation (double): the correction range in pair indices.
    const double s = 4.0, base = 1e6, d = 64, orig = 4096;
    const auto corr = [&](double rotations) {
        return d * std::log(orig / (rotations * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
    };
    const double low = std::max(0.0, std::floor(corr(32.0)));
    const double high = std::min(d - 1.0, std::ceil(corr(1.0)));
    REQUIRE(low < high);
    const double mscale = 1.0 + 0.1 * std::log(s);

    std::vector<float> cs(64);
    int n_extrap = 0, n_interp = 0, n_mixed = 0;
    for (const std::int64_t pos : {1, 300, 9000}) {
        ember::model::rope_angles(cs.data(), pos, c.rope, {});
        for (std::int64_t i = 0; i < 32; ++i) {
            const double ramp = std::clamp((static_cast<double>(i) - low) / std::max(0.001, high - low), 0.0, 1.0);
            const double keep = 1.0 - ramp;  // weight of the unscaled (extrapolated) frequency
            const double theta = inv_freq(i, 64, base);
            const double t = static_cast<double>(pos) * (theta / s * (1.0 - keep) + theta * keep);
            CAPTURE(pos, i, t);
            CHECK(cs[static_cast<std::size_t>(2 * i)] == Approx(std::cos(t) * mscale).margin(2e-3));
            CHECK(cs[static_cast<std::size_t>(2 * i + 1)] == Approx(std::sin(t) * mscale).margin(2e-3));
            n_extrap += keep == 1.0;
            n_interp += keep == 0.0;
            n_mixed += keep > 0.0 && keep < 1.0;
        }
    }
    // The test covers all three regimes.
    CHECK(n_extrap > 0);
    CHECK(n_interp > 0);
    CHECK(n_mixed > 0);
    // A pure rotation (context shift) has magnitude 1.
    ember::model::rope_angles(cs.data(), 300, c.rope, {}, /*rotation_only=*/true);
    CHECK(std::hypot(cs[10], cs[11]) == Approx(1.0f).margin(1e-6));
}

TEST_CASE("LongRoPE: short or long factors by context, attention factor on cos/sin", "[rope][config]") {
    auto w = model_test::small_model_keys("llama");
    w.set_u32("llama.rope.scaling.original_context_length", 1024);
    const float attn = std::sqrt(1.0f + std::log(4.0f) / std::log(1024.0f));  // Phi-3's factor
    w.set_f32("llama.rope.scaling.attn_factor", attn);
    const auto file = model_test::load(w);
    const auto c = ember::model::ModelConfig::from_gguf(file);
    CHECK(c.rope.mscale == attn);
    CHECK(c.rope.ext_factor == 0.0f);

    ember::model::ModelWeights weights;
    weights.rope_short = {1.0f, 1.5f, 2.0f, 3.0f};
    weights.rope_long = {2.0f, 4.0f, 8.0f, 16.0f};
    CHECK(weights.rope_factors(1024, c).data() == weights.rope_short.data());
    CHECK(weights.rope_factors(1025, c).data() == weights.rope_long.data());
    weights.rope_freqs = {1.0f, 1.0f, 2.0f, 2.0f};  // Llama 3's factors win
    CHECK(weights.rope_factors(4096, c).data() == weights.rope_freqs.data());

    std::vector<float> cs(8);
    for (const auto* factors : {&weights.rope_short, &weights.rope_long}) {
        ember::model::rope_angles(cs.data(), 123, c.rope, *factors);
        for (std::int64_t i = 0; i < 4; ++i) {
            const double t = 123.0 * inv_freq(i, 8, 10000.0) / (*factors)[static_cast<std::size_t>(i)];
            CHECK(cs[static_cast<std::size_t>(2 * i)] == Approx(std::cos(t) * attn).margin(1e-5));
            CHECK(cs[static_cast<std::size_t>(2 * i + 1)] == Approx(std::sin(t) * attn).margin(1e-5));
        }
    }
}

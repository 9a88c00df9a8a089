// ModelConfig: architecture descriptions drive which keys are read; malformed metadata is an
// ember::Error naming the file and the key.
#include <catch2/catch.hpp>

#include "config_test_util.hpp"
#include "ember/error.hpp"
#include "model/config.hpp"

using Catch::Contains;
using ember::model::ModelConfig;

namespace {

void check_fails(const ember::gguf::Writer& w, const std::string& key, const std::string& why) {
    const auto file = model_test::load(w, "bad-model.gguf");
    CAPTURE(key, why);
    CHECK_THROWS_WITH(ModelConfig::from_gguf(file), Contains("bad-model.gguf") && Contains(key) && Contains(why));
}

}  // namespace

TEST_CASE("config: defaults of a plain llama file", "[config]") {
    const auto file = model_test::load(model_test::small_model_keys("llama"));
    const auto c = ModelConfig::from_gguf(file);
    CHECK(c.arch->name == "llama");
    CHECK(c.head_dim == 8);
    CHECK(c.n_rot() == 8);
    CHECK(c.rope.style == ember::model::RopeStyle::normal);
    CHECK(c.rope.freq_scale == 1.0f);
    CHECK(c.rope.mscale == 1.0f);
    CHECK(c.attn_scale == 1.0f / std::sqrt(8.0f));
    CHECK(c.n_swa == 0);
    CHECK(c.embed_scale == 1.0f);
    for (std::int64_t il = 0; il < c.n_layer; ++il) CHECK_FALSE(c.is_local(il));
}

TEST_CASE("config: malformed metadata names the file and the key", "[config]") {
    {
        auto w = model_test::small_model_keys("llama");
        w.set_string("general.architecture", "mamba");
        check_fails(w, "general.architecture", "'mamba'");
    }
    {
        auto w = model_test::small_model_keys("llama");
        w.set_u32("llama.rope.dimension_count", 7);
        check_fails(w, "llama.rope.dimension_count", "even");
    }
    {
        auto w = model_test::small_model_keys("llama");
        w.set_u32("llama.rope.dimension_count", 4);  // llama rotates the whole head
        check_fails(w, "llama.rope.dimension_count", "whole head");
    }
    {
        auto w = model_test::small_model_keys("llama");
        w.set_string("llama.rope.scaling.type", "ntk-by-parts");
        check_fails(w, "llama.rope.scaling.type", "ntk-by-parts");
    }
    {
        auto w = model_test::small_model_keys("llama");
        w.set_f32("llama.rope.scaling.factor", -2.0f);
        check_fails(w, "llama.rope.scaling.factor", "finite");
    }
    {
        auto w = model_test::small_model_keys("llama");
        w.set_u32("llama.attention.key_length", 16);
        w.set_u32("llama.attention.value_length", 8);
        check_fails(w, "llama.attention.value_length", "differs");
    }
    {
        auto w = model_test::small_model_keys("llama");
        w.set_u32("llama.attention.head_count_kv", 3);
        check_fails(w, "attention.head_count_kv", "multiple");
    }
    {
        auto w = model_test::small_model_keys("llama");
        w.set_f32("llama.rope.freq_base", 0.0f);
        check_fails(w, "llama.rope.freq_base", "> 0");
    }
    {
        auto w = model_test::small_model_keys("llama");
        w.set_string("llama.block_count", "five");
        check_fails(w, "llama.block_count", "");
    }
}

TEST_CASE("config: head size from key_length", "[config]") {
    auto w = model_test::small_model_keys("llama");
    w.set_u32("llama.attention.key_length", 16);
    w.set_u32("llama.attention.value_length", 16);
    const auto c = ModelConfig::from_gguf(model_test::load(w));
    CHECK(c.head_dim == 16);
    CHECK(c.n_embd_q() == 128);
    CHECK(c.n_embd_kv() == 64);
    CHECK(c.attn_scale == 1.0f / std::sqrt(16.0f));
}

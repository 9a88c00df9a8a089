// The architecture tables read the shared files as llama.cpp does: which layers are local,
// RoPE style and bases, attention scale, soft-caps; and a file lacking a tensor its table
// requires is an error naming the file and the tensor.
#include <catch2/catch.hpp>

#include <vector>

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "model/config.hpp"
#include "model/weights.hpp"
#include "support/shared_data.hpp"

using ember::model::ModelConfig;
using ember::model::RopeStyle;
using ember::model::ScaleAt;

namespace {

ember::gguf::File open_arch(const std::string& arch) {
    return ember::gguf::File::open(ember_test::shared_file("models/arch/stories260K-" + arch + ".gguf").string());
}

std::vector<int> local_layers(const ModelConfig& c) {
    std::vector<int> v;
    for (std::int64_t il = 0; il < c.n_layer; ++il) v.push_back(c.is_local(il) ? 1 : 0);
    return v;
}

// The shared file with metadata `edit` applied and tensor `drop` left out.
ember::gguf::File rewritten(const ember::gguf::File& in, const std::string& drop,
                            const std::function<void(ember::gguf::Writer&)>& edit = {}) {
    ember::gguf::Writer w;
    w.copy_metadata(in);
    if (edit) edit(w);
    for (const auto& t : in.tensors()) {
        if (t.name == drop) continue;
        std::vector<std::int64_t> dims(t.ne, t.ne + t.n_dims);
        w.add_tensor_view(t.name, t.type, dims, {t.data, static_cast<std::size_t>(t.n_bytes)});
    }
    const auto bytes = w.write_to_bytes();
    return ember::gguf::File::from_copy(bytes.data(), bytes.size(), "edited-" + std::string(in.name().substr(in.name().rfind('/') + 1)));
}

}  // namespace

TEST_CASE("arch tables: configuration of the shared files", "[arch][config]") {
    EMBER_REQUIRE_SHARED("models/arch/stories260K-gemma3.gguf");
    {
        const auto c = ModelConfig::from_gguf(open_arch("qwen2"));
        CHECK(c.rope.style == RopeStyle::neox);
        CHECK(c.attn_scale_at == ScaleAt::scores);
        CHECK(c.n_swa == 0);
    }
    {
        const auto c = ModelConfig::from_gguf(open_arch("qwen3"));
        CHECK(c.head_dim == 8);
        CHECK(c.rope.style == RopeStyle::neox);
    }
    {
        const auto c = ModelConfig::from_gguf(open_arch("phi3"));
        CHECK(c.attn_scale_at == ScaleAt::queries);
        CHECK(c.n_swa == 0);
    }
    {
        const auto c = ModelConfig::from_gguf(open_arch("gemma2"));
        CHECK(c.n_swa == 16);
        CHECK(local_layers(c) == std::vector<int>{1, 0, 1, 0, 1});
        CHECK(c.attn_softcap == 50.0f);
        CHECK(c.final_softcap == 30.0f);
        CHECK(c.embed_scale == std::sqrt(64.0f));
        CHECK(c.attn_scale == 1.0f / std::sqrt(8.0f));
        CHECK(c.rope_local.freq_base == c.rope.freq_base);
    }
    {
        const auto c = ModelConfig::from_gguf(open_arch("gemma3"));
        CHECK(c.n_swa == 16);
        CHECK(local_layers(c) == std::vector<int>{1, 1, 1, 1, 1, 0});
        CHECK(c.attn_softcap == 0.0f);
        CHECK(c.final_softcap == 0.0f);
        CHECK(c.rope.freq_base == 1000000.0f);
        CHECK(c.rope_local.freq_base == 10000.0f);
    }
}

TEST_CASE("arch tables: keys change what the decoder does", "[arch][config]") {
    EMBER_REQUIRE_SHARED("models/arch/stories260K-gemma3.gguf");
    // Gemma 3 without a sliding window: every layer global.
    const auto no_swa = rewritten(open_arch("gemma3"), "", [](auto& w) { w.remove("gemma3.attention.sliding_window"); });
    CHECK(local_layers(ModelConfig::from_gguf(no_swa)) == std::vector<int>(6, 0));
    // Gemma 2 without the soft-capping keys: llama.cpp's defaults; a 46-layer count would be
    // the 27B model's query_pre_attn_scalar (n_embd / n_head).
    const auto defaults = rewritten(open_arch("gemma2"), "", [](auto& w) {
        w.remove("gemma2.attn_logit_softcapping");
        w.remove("gemma2.final_logit_softcapping");
        w.remove("gemma2.attention.sliding_window");
        w.set_u32("gemma2.attention.key_length", 16);
        w.set_u32("gemma2.attention.value_length", 16);
    });
    const auto c = ModelConfig::from_gguf(defaults);
    CHECK(c.attn_softcap == 50.0f);
    CHECK(c.final_softcap == 30.0f);
    CHECK(c.n_swa == 4096);
    CHECK(c.attn_scale == 1.0f / std::sqrt(16.0f));
    const auto big = rewritten(defaults, "", [](auto& w) { w.set_u32("gemma2.block_count", 46); });
    CHECK(ModelConfig::from_gguf(big).attn_scale == 1.0f / std::sqrt(64.0f / 8.0f));
    // Phi-3's sliding_window is ignored (llama.cpp PR 13676).
    const auto phi = rewritten(open_arch("phi3"), "", [](auto& w) { w.set_u32("phi3.attention.sliding_window", 2047); });
    CHECK(ModelConfig::from_gguf(phi).n_swa == 0);
}

TEST_CASE("arch tables: a missing required tensor names the file and the tensor", "[arch][config]") {
    EMBER_REQUIRE_SHARED("models/arch/stories260K-gemma3.gguf");
    const std::pair<const char*, const char*> cases[] = {
        {"qwen2", "blk.2.attn_k.bias"},
        {"qwen3", "blk.0.attn_q_norm.weight"},
        {"phi3", "blk.1.ffn_up.weight"},
        {"gemma2", "blk.3.post_ffw_norm.weight"},
        {"gemma3", "blk.5.attn_k_norm.weight"},
    };
    for (const auto& [arch, tensor] : cases) {
        CAPTURE(arch, tensor);
        const auto file = rewritten(open_arch(arch), tensor);
        const auto c = ModelConfig::from_gguf(file);
        CHECK_THROWS_WITH(ember::model::ModelWeights::from_gguf(file, c),
                          Catch::Contains("edited-stories260K-" + std::string(arch)) && Catch::Contains(tensor));
    }
    // phi3 without attn_qkv needs the separate projections.
    const auto file = rewritten(open_arch("phi3"), "blk.0.attn_qkv.weight");
    CHECK_THROWS_WITH(ember::model::ModelWeights::from_gguf(file, ModelConfig::from_gguf(file)),
                      Catch::Contains("blk.0.attn_q.weight"));
}

TEST_CASE("arch tables: a block count past the file's tensors is an error before any layer", "[arch][config]") {
    EMBER_REQUIRE_SHARED("models/arch/stories260K-qwen2.gguf");
    // Found by fuzzing: block_count 2^24 in a small file sized 1.4 GB of layers first.
    const auto file = rewritten(open_arch("qwen2"), "", [](ember::gguf::Writer& w) { w.set_u32("qwen2.block_count", 100000); });
    const auto c = ModelConfig::from_gguf(file);
    CHECK_THROWS_WITH(ember::model::ModelWeights::from_gguf(file, c),
                      Catch::Contains("edited-stories260K-qwen2") && Catch::Contains("'qwen2.block_count' is 100000") &&
                          Catch::Contains("tensors"));
}

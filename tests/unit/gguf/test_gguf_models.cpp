// Parsing the shared stories260K models (F32, Q8_0, Q4_0).
#include <catch2/catch.hpp>

#include <string>

#include "ember/error.hpp"
#include "gguf/gguf_file.hpp"
#include "support/shared_data.hpp"

using ember::TensorType;
using ember::gguf::File;

namespace {

void check_common_metadata(const File& f) {
    CHECK(f.version() == 3);
    CHECK(f.alignment() == 32);
    CHECK(f.data_offset() % 32 == 0);
    CHECK(f.get_string("general.architecture") == "llama");
    CHECK(f.get_u32("llama.embedding_length") == 64);
    CHECK(f.get_u32("llama.block_count") == 5);
    CHECK(f.get_string("tokenizer.ggml.model") == "llama");
    const auto& tokens = f.get_array("tokenizer.ggml.tokens");
    CHECK(tokens.element_type == ember::gguf::ValueType::string);
    CHECK(tokens.items.size() == 512);
    CHECK(tokens.items[0].as_string("tokens") == "<unk>");
    CHECK(f.tensors().size() == 48);
    REQUIRE(f.find_tensor("token_embd.weight") != nullptr);
    CHECK(f.find_tensor("no.such.tensor") == nullptr);
    CHECK(f.find("no.such.key") == nullptr);
    const auto* norm = f.find_tensor("output_norm.weight");
    REQUIRE(norm != nullptr);
    CHECK(norm->type == TensorType::F32);
    CHECK(norm->n_dims == 1);
    CHECK(norm->ne[0] == 64);
    CHECK(norm->n_bytes == 64 * 4);
    // Every tensor's data lies in the file and its byte size follows the type.
    for (const auto& t : f.tensors()) {
        const auto traits = ember::tensor_type_traits(static_cast<std::uint32_t>(t.type));
        REQUIRE(traits);
        CHECK(t.n_bytes == static_cast<std::uint64_t>(t.n_elements / traits->block_size * traits->block_bytes));
        CHECK(t.data == f.bytes().data() + f.data_offset() + t.offset);
        CHECK(t.offset + t.n_bytes <= f.bytes().size() - f.data_offset());
    }
}

}  // namespace

TEST_CASE("stories260K F32 parses with the expected metadata and tensors", "[gguf]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const File f = File::open(ember_test::shared_file("models/stories260K.gguf").string());
    check_common_metadata(f);
    for (const auto& t : f.tensors()) CHECK(t.type == TensorType::F32);
    const auto* q = f.find_tensor("blk.0.attn_q.weight");
    REQUIRE(q != nullptr);
    CHECK(q->n_dims == 2);
    CHECK(q->ne[0] == 64);
    CHECK(q->ne[1] == 64);
    CHECK(q->n_bytes == 64 * 64 * 4);
    CHECK(f.bytes().size() == 1185376);
    CHECK(f.metadata().size() == 19);
    CHECK(f.get_f32("llama.attention.layer_norm_rms_epsilon") > 0.0f);
    CHECK(f.get_array("tokenizer.ggml.scores").items.size() == 512);
    // Checked getters: absent keys and mistyped values name the file and key.
    const std::string path = f.name();
    CHECK_THROWS_WITH(f.get_u32("llama.nope"), Catch::Contains(path) && Catch::Contains("'llama.nope'"));
    CHECK_THROWS_WITH(f.get_u32("general.architecture"),
                      Catch::Contains("'general.architecture'") && Catch::Contains("byte"));
    CHECK_THROWS_WITH(f.get_string("llama.block_count"), Catch::Contains("'llama.block_count'"));
    CHECK_THROWS_AS(f.get_array("llama.block_count"), ember::Error);
    CHECK_THROWS_AS(f.get_u32_or("general.architecture", 3), ember::Error);
    CHECK(f.get_u32_or("llama.nope", 7) == 7);
    CHECK(f.get_f32_or("llama.nope", 0.5f) == 0.5f);
    CHECK(f.get_bool_or("llama.nope", true));
    CHECK(f.get_string_or("llama.nope", "dflt") == "dflt");
    CHECK(f.get_f32("llama.block_count") == 5.0f);  // any number converts to f32
}

TEST_CASE("stories260K Q8_0 and Q4_0 parse with quantized types", "[gguf]") {
    for (const auto& [file, type] : {std::pair{"models/stories260K-Q8_0.gguf", TensorType::Q8_0},
                                     std::pair{"models/stories260K-Q4_0.gguf", TensorType::Q4_0}}) {
        EMBER_REQUIRE_SHARED(file);
        const File f = File::open(ember_test::shared_file(file).string());
        INFO(file);
        check_common_metadata(f);
        const auto* q = f.find_tensor("blk.0.attn_q.weight");
        REQUIRE(q != nullptr);
        CHECK(q->type == type);
        CHECK(q->n_bytes == 64 * 64 / 32 * (type == TensorType::Q8_0 ? 34u : 18u));
        CHECK(q->row_bytes() == 64 / 32 * (type == TensorType::Q8_0 ? 34u : 18u));
        CHECK(f.find_tensor("output_norm.weight")->type == TensorType::F32);
        CHECK(f.find_tensor("output.weight")->type == TensorType::Q8_0);
        // ne[0] = 172 is not a multiple of 32: llama.cpp falls back to F16 for ffn_down.
        const auto* down = f.find_tensor("blk.4.ffn_down.weight");
        REQUIRE(down != nullptr);
        CHECK(down->type == TensorType::F16);
        CHECK(down->ne[0] == 172);
        CHECK(down->ne[1] == 64);
        CHECK(down->n_bytes == 172 * 64 * 2);
        CHECK(f.bytes().size() == (type == TensorType::Q8_0 ? 379168u : 277024u));
    }
}

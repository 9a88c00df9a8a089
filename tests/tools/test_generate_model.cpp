// ember-generate-model's library function: complete metadata, requested types, determinism
// across thread counts, a usable synthetic vocabulary, finite activations.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/generate_model.hpp"
#include "common/quant_mix.hpp"
#include "ember/model.hpp"
#include "ember/session.hpp"
#include "gguf/gguf_file.hpp"
#include "support/shared_data.hpp"
#include "tools/tools_test_util.hpp"

namespace fs = std::filesystem;

namespace {

fs::path genmodel_dir() { return tools_test::temp_dir("genmodel"); }
using tools_test::read_all;

}  // namespace

TEST_CASE("generated models have llama metadata, the requested types and a usable synthetic vocabulary",
          "[tools][generate]") {
    const auto dir = genmodel_dir();
    ember::tools::GenerateOptions g;
    g.shape.n_vocab = 1000;
    g.shape.n_head_kv = 2;
    g.type = ember::tools::find_file_type("Q4_K_M");
    g.verbose = false;
    g.threads = 2;
    const fs::path a = dir / "a.gguf";
    ember::tools::generate_model(g, a.string());

    const auto f = ember::gguf::File::open(a.string());
    CHECK(f.get_string("general.architecture") == "llama");
    CHECK(f.get_u32("llama.embedding_length") == 256);
    CHECK(f.get_u32("llama.block_count") == 2);
    CHECK(f.get_u32("llama.attention.head_count_kv") == 2);
    CHECK(f.get_u32("general.file_type") == 15);
    CHECK(f.get_array("tokenizer.ggml.tokens").items.size() == 1000);
    CHECK(f.tensors().size() == 3 + 2 * 9);
    CHECK(f.find_tensor("blk.1.attn_v.weight")->type == ember::TensorType::Q6_K);
    CHECK(f.find_tensor("blk.0.attn_q.weight")->type == ember::TensorType::Q4_K);
    CHECK(f.find_tensor("output.weight")->type == ember::TensorType::Q6_K);

    // Same seed, one thread: the same bytes. Another seed: other weights.
    g.threads = 1;
    const fs::path b = dir / "b.gguf";
    ember::tools::generate_model(g, b.string());
    CHECK(read_all(a) == read_all(b));
    g.seed = 7;
    const fs::path c = dir / "c.gguf";
    ember::tools::generate_model(g, c.string());
    CHECK(read_all(a) != read_all(c));

    // The model loads, round-trips text through its vocabulary and gives finite logits.
    const ember::Model model = ember::Model::load(a.string());
    CHECK(model.n_vocab() == 1000);
    const std::string text = "hello world, this is a test";
    const auto ids = model.tokenize(text);
    CHECK(ids.size() > 2);
    CHECK(model.detokenize(ids) == text);
    ember::SessionOptions so;
    so.context = 64;
    so.threads = 2;
    ember::Session s(model, so);
    REQUIRE(s.prefill(ids) == ember::Status::ok);
    for (float v : s.logits()) REQUIRE(std::isfinite(v));
    fs::remove_all(dir);
}

TEST_CASE("--vocab-from copies the tokenizer of another model", "[tools][generate]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto dir = genmodel_dir();
    ember::tools::GenerateOptions g;
    g.vocab_from = ember_test::shared_file("models/stories260K.gguf").string();
    g.type = ember::tools::find_file_type("Q8_0");
    g.verbose = false;
    const fs::path out = dir / "v.gguf";
    ember::tools::generate_model(g, out.string());
    const auto src = ember::gguf::File::open(g.vocab_from);
    const auto f = ember::gguf::File::open(out.string());
    for (const auto& kv : src.metadata()) {
        if (kv.key.rfind("tokenizer.", 0) != 0) continue;
        INFO(kv.key);
        REQUIRE(f.find(kv.key) != nullptr);
    }
    CHECK(f.find_tensor("token_embd.weight")->ne[1] == 512);
    const ember::Model m = ember::Model::load(out.string());
    const ember::Model ref = ember::Model::load(g.vocab_from);
    CHECK(m.tokenize("Once upon a time") == ref.tokenize("Once upon a time"));
    fs::remove_all(dir);
}

TEST_CASE("generate_model rejects inconsistent shapes", "[tools][generate]") {
    ember::tools::GenerateOptions g;
    g.verbose = false;
    g.shape.n_head = 3;  // 256 is not a multiple of 3
    CHECK_THROWS_AS(ember::tools::generate_model(g, "/nonexistent/x.gguf"), ember::Error);
    g.shape.n_head = 4;
    g.shape.n_head_kv = 3;
    CHECK_THROWS_AS(ember::tools::generate_model(g, "/nonexistent/x.gguf"), ember::Error);
}

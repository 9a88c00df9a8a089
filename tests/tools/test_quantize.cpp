// ember-quantize's library function: llama.cpp compatibility (byte-identical files), tensor type
// mixtures, metadata preservation, determinism against fresh quantization, and that every
// output loads and generates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/generate_model.hpp"
#include "common/quant_mix.hpp"
#include "common/quantize_model.hpp"
#include "ember/model.hpp"
#include "ember/session.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "kernels/kquant.hpp"
#include "kernels/matmul.hpp"
#include "kernels/quants.hpp"
#include "support/shared_data.hpp"
#include "tools/tools_test_util.hpp"

namespace fs = std::filesystem;
using ember::TensorType;

namespace {

fs::path temp_dir() { return tools_test::temp_dir("tools"); }
using tools_test::read_all;

const ember::tools::FileType& file_type(const char* name) {
    const auto* t = ember::tools::find_file_type(name);
    REQUIRE(t != nullptr);
    return *t;
}

ember::tools::QuantizeOptions quiet() {
    ember::tools::QuantizeOptions o;
    o.threads = 2;
    o.verbose = false;
    return o;
}

// The quantizer's output for one row, through the kernels directly (not the tool's helpers).
void fresh_quantize(TensorType type, const float* x, std::uint8_t* dst, std::int64_t n) {
    switch (type) {
        case TensorType::Q4_K: ember::kernels::quantize_row_q4_k(x, reinterpret_cast<ember::kernels::BlockQ4K*>(dst), n); break;
        case TensorType::Q5_K: ember::kernels::quantize_row_q5_k(x, reinterpret_cast<ember::kernels::BlockQ5K*>(dst), n); break;
        case TensorType::Q6_K: ember::kernels::quantize_row_q6_k(x, reinterpret_cast<ember::kernels::BlockQ6K*>(dst), n); break;
        default: ember::kernels::quantize_row(type, x, dst, n); break;
    }
}

// Every metadata entry of `in` is in `out` with the same value, except general.file_type;
// out adds only general.file_type and general.quantization_version.
void check_metadata(const ember::gguf::File& in, const ember::gguf::File& out, std::uint32_t ftype) {
    for (const auto& kv : in.metadata()) {
        if (kv.key == "general.file_type" || kv.key == "general.quantization_version") continue;
        const auto* v = out.find(kv.key);
        INFO("key " << kv.key);
        REQUIRE(v != nullptr);
        const auto a = ember::gguf::MetaValue::from(kv.value), b = ember::gguf::MetaValue::from(*v);
        CHECK(a.type() == b.type());
        CHECK(a.payload() == b.payload());
    }
    for (const auto& kv : out.metadata()) {
        INFO("key " << kv.key);
        CHECK((in.find(kv.key) != nullptr || kv.key == "general.file_type" ||
               kv.key == "general.quantization_version"));
    }
    CHECK(out.get_u32("general.file_type") == ftype);
    CHECK(out.get_u32("general.quantization_version") == 2);
}

// Each output tensor holds exactly what quantizing the input tensor afresh gives.
void check_tensors(const ember::gguf::File& in, const ember::gguf::File& out) {
    REQUIRE(in.tensors().size() == out.tensors().size());
    for (const auto& t : out.tensors()) {
        INFO("tensor " << t.name << " " << ember::tensor_type_name(t.type));
        const auto* src = in.find_tensor(t.name);
        REQUIRE(src != nullptr);
        REQUIRE(src->n_dims == t.n_dims);
        for (int d = 0; d < 4; ++d) REQUIRE(src->ne[d] == t.ne[d]);
        if (src->type == t.type) {
            CHECK(std::memcmp(src->data, t.data, t.n_bytes) == 0);
            continue;
        }
        const std::int64_t n = t.ne[0];
        std::vector<float> row(static_cast<std::size_t>(n));
        std::vector<std::uint8_t> q(t.row_bytes());
        bool same = true;
        for (std::int64_t r = 0; r < t.n_rows() && same; ++r) {
            ember::kernels::dequantize_row(*src, r, row.data());
            fresh_quantize(t.type, row.data(), q.data(), n);
            same = std::memcmp(q.data(), t.data + static_cast<std::size_t>(r) * t.row_bytes(), q.size()) == 0;
        }
        CHECK(same);
    }
}

// Loads the file in ember and generates greedily; returns the ids.
std::vector<ember::Token> generate(const fs::path& model_path, int n) {
    ember::ModelOptions mo;
    mo.threads = 2;
    const ember::Model model = ember::Model::load(model_path.string(), mo);
    ember::SessionOptions so;
    so.context = 128;
    ember::Session s(model, so);
    REQUIRE(s.prefill(model.tokenize("Once upon a time")) == ember::Status::ok);
    std::vector<ember::Token> ids;
    for (int i = 0; i < n; ++i) {
        const auto logits = s.logits();
        REQUIRE(std::all_of(logits.begin(), logits.end(), [](float v) { return std::isfinite(v); }));
        const auto t = static_cast<ember::Token>(std::max_element(logits.begin(), logits.end()) - logits.begin());
        ids.push_back(t);
        REQUIRE(s.decode(t) == ember::Status::ok);
    }
    return ids;
}

std::map<std::string, TensorType> types_of(const ember::gguf::File& f) {
    std::map<std::string, TensorType> m;
    for (const auto& t : f.tensors()) m[std::string(t.name)] = t.type;
    return m;
}

}  // namespace

TEST_CASE("Q8_0 and Q4_0 quantization of stories260K reproduces llama.cpp's files byte for byte", "[tools][quantize]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    EMBER_REQUIRE_SHARED("models/stories260K-Q8_0.gguf");
    EMBER_REQUIRE_SHARED("models/stories260K-Q4_0.gguf");
    const auto dir = temp_dir();
    for (const char* type : {"Q8_0", "Q4_0"}) {
        INFO(type);
        const fs::path out = dir / (std::string("stories-") + type + ".gguf");
        ember::tools::quantize_model(ember_test::shared_file("models/stories260K.gguf").string(), out.string(),
                                     file_type(type), quiet());
        const auto ours = read_all(out);
        const auto theirs = read_all(ember_test::shared_file(std::string("models/stories260K-") + type + ".gguf"));
        REQUIRE(ours.size() == theirs.size());
        CHECK(ours == theirs);
    }
    fs::remove_all(dir);
}

TEST_CASE("every type of kq-f32 reproduces llama-quantize's file byte for byte", "[tools][quantize]") {
    // ../shared/models/quant-ref: a random 2-layer llama whose rows are multiples of 256, and
    // llama-quantize's output for each type with its default mixture (Q6_K output, use_more_bits
    // attn_v/ffn_down in the _M types, Q5_K attn_v in Q4_K_S, ...). Same bytes means the same
    // quantizer arithmetic, tensor types, tensor order, metadata order and alignment.
    EMBER_REQUIRE_SHARED("models/quant-ref/kq-f32.gguf");
    const auto dir = temp_dir();
    const std::string in = ember_test::shared_file("models/quant-ref/kq-f32.gguf").string();
    for (const char* type : {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",
                             "F16", "BF16"}) {
        INFO(type);
        const std::string ref = std::string("models/quant-ref/kq-") + type + ".gguf";
        if (EMBER_SHARED_MISSING(ref)) continue;
        const fs::path out = dir / (std::string("kq-") + type + ".gguf");
        ember::tools::quantize_model(in, out.string(), file_type(type), quiet());
        const auto ours = read_all(out);
        const auto theirs = read_all(ember_test::shared_file(ref));
        const auto diff = std::mismatch(ours.begin(), ours.end(), theirs.begin(), theirs.end());
        INFO("sizes " << ours.size() << " and " << theirs.size() << ", first difference at byte "
                      << (diff.first - ours.begin()));
        CHECK(ours == theirs);
    }
    fs::remove_all(dir);
}

TEST_CASE("every quantization type of stories260K keeps the metadata, holds fresh quantizations and generates",
          "[tools][quantize]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto dir = temp_dir();
    const fs::path in_path = ember_test::shared_file("models/stories260K.gguf");
    const auto in = ember::gguf::File::open(in_path.string());
    for (const char* type : {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",
                             "F16", "BF16"}) {
        SECTION(type) {
            const fs::path out_path = dir / (std::string("stories-") + type + ".gguf");
            const auto& ft = file_type(type);
            const auto sum = ember::tools::quantize_model(in_path.string(), out_path.string(), ft, quiet());
            CHECK(sum.n_tensors == 48);
            const auto out = ember::gguf::File::open(out_path.string());
            check_metadata(in, out, ft.ftype);
            check_tensors(in, out);
            const auto ids = generate(out_path, 16);
            CHECK(ids.size() == 16);
            // A second run gives the same bytes (deterministic, any thread count).
            const fs::path again = dir / (std::string("again-") + type + ".gguf");
            auto o1 = quiet();
            o1.threads = 1;
            ember::tools::quantize_model(in_path.string(), again.string(), ft, o1);
            CHECK(read_all(again) == read_all(out_path));
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("stories260K rows (64, 172 wide) fall back like llama.cpp", "[tools][quantize]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto dir = temp_dir();
    const fs::path out = dir / "stories-q4km.gguf";
    ember::tools::quantize_model(ember_test::shared_file("models/stories260K.gguf").string(), out.string(),
                                 file_type("Q4_K_M"), quiet());
    const auto types = types_of(ember::gguf::File::open(out.string()));
    CHECK(types.at("output.weight") == TensorType::Q8_0);          // row not a multiple of 256
    CHECK(types.at("token_embd.weight") == TensorType::Q5_0);      // Q4_K -> Q5_0
    CHECK(types.at("blk.0.attn_q.weight") == TensorType::Q5_0);
    // use_more_bits over 5 layers: 2 ((2 - 0) % 3 == 2) and 4 (>= 7*5/8) get Q6_K -> Q8_0.
    CHECK(types.at("blk.2.attn_v.weight") == TensorType::Q8_0);
    CHECK(types.at("blk.4.attn_v.weight") == TensorType::Q8_0);
    CHECK(types.at("blk.0.attn_v.weight") == TensorType::Q5_0);
    CHECK(types.at("blk.3.attn_v.weight") == TensorType::Q5_0);
    CHECK(types.at("blk.0.ffn_down.weight") == TensorType::F16);   // 172: no 32-block type fits
    CHECK(types.at("blk.0.attn_norm.weight") == TensorType::F32);
    fs::remove_all(dir);
}

TEST_CASE("K-quant mixtures on a model with 256-wide rows", "[tools][quantize]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto dir = temp_dir();
    ember::tools::GenerateOptions g;
    g.shape.n_embd = 256;
    g.shape.n_head = 4;
    g.shape.n_head_kv = 2;
    g.shape.n_ff = 512;
    g.shape.n_layer = 2;
    g.type = &file_type("F32");
    g.vocab_from = ember_test::shared_file("models/stories260K.gguf").string();
    g.verbose = false;
    const fs::path src = dir / "gen-f32.gguf";
    ember::tools::generate_model(g, src.string());
    const auto in = ember::gguf::File::open(src.string());

    struct Expect {
        const char* type;
        TensorType base, embd, output, v0, v1, down0, down1;
    };
    const Expect cases[] = {
        {"Q4_K_M", TensorType::Q4_K, TensorType::Q4_K, TensorType::Q6_K, TensorType::Q4_K, TensorType::Q6_K,
         TensorType::Q4_K, TensorType::Q6_K},
        {"Q5_K_M", TensorType::Q5_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::Q5_K, TensorType::Q6_K,
         TensorType::Q5_K, TensorType::Q6_K},
        {"Q4_K_S", TensorType::Q4_K, TensorType::Q4_K, TensorType::Q6_K, TensorType::Q5_K, TensorType::Q5_K,
         TensorType::Q4_K, TensorType::Q4_K},
        {"Q6_K", TensorType::Q6_K, TensorType::Q6_K, TensorType::Q6_K, TensorType::Q6_K, TensorType::Q6_K,
         TensorType::Q6_K, TensorType::Q6_K},
        {"Q8_0", TensorType::Q8_0, TensorType::Q8_0, TensorType::Q8_0, TensorType::Q8_0, TensorType::Q8_0,
         TensorType::Q8_0, TensorType::Q8_0},
        {"Q4_0", TensorType::Q4_0, TensorType::Q4_0, TensorType::Q6_K, TensorType::Q4_0, TensorType::Q4_0,
         TensorType::Q4_0, TensorType::Q4_0},
    };
    for (const Expect& e : cases) {
        SECTION(e.type) {
            const fs::path out_path = dir / (std::string("gen-") + e.type + ".gguf");
            ember::tools::quantize_model(src.string(), out_path.string(), file_type(e.type), quiet());
            const auto out = ember::gguf::File::open(out_path.string());
            const auto types = types_of(out);
            CHECK(types.at("token_embd.weight") == e.embd);
            CHECK(types.at("output.weight") == e.output);
            CHECK(types.at("blk.0.attn_v.weight") == e.v0);
            CHECK(types.at("blk.1.attn_v.weight") == e.v1);
            CHECK(types.at("blk.0.ffn_down.weight") == e.down0);
            CHECK(types.at("blk.1.ffn_down.weight") == e.down1);
            CHECK(types.at("blk.1.attn_q.weight") == e.base);
            CHECK(types.at("blk.0.ffn_up.weight") == e.base);
            CHECK(types.at("output_norm.weight") == TensorType::F32);
            check_metadata(in, out, file_type(e.type).ftype);
            check_tensors(in, out);
            CHECK(generate(out_path, 8).size() == 8);
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("an already quantized input is dequantized and requantized", "[tools][quantize]") {
    EMBER_REQUIRE_SHARED("models/stories260K-Q8_0.gguf");
    const auto dir = temp_dir();
    const fs::path in_path = ember_test::shared_file("models/stories260K-Q8_0.gguf");
    const fs::path out_path = dir / "requant-q4_0.gguf";
    ember::tools::quantize_model(in_path.string(), out_path.string(), file_type("Q4_0"), quiet());
    const auto in = ember::gguf::File::open(in_path.string());
    const auto out = ember::gguf::File::open(out_path.string());
    check_metadata(in, out, 2);
    check_tensors(in, out);
    CHECK(types_of(out).at("blk.0.attn_q.weight") == TensorType::Q4_0);
    CHECK(generate(out_path, 8).size() == 8);
    fs::remove_all(dir);
}

TEST_CASE("type choice follows llama.cpp's use_more_bits over 22 layers", "[tools][quantize]") {
    ember::tools::TypeChooser chooser(file_type("Q4_K_M"), 22, 22, true);
    std::vector<int> more_bits_v, more_bits_down;
    for (int l = 0; l < 22; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        CHECK(chooser.choose(p + "attn_q.weight", 2048) == TensorType::Q4_K);
        if (chooser.choose(p + "attn_v.weight", 2048) == TensorType::Q6_K) more_bits_v.push_back(l);
        if (chooser.choose(p + "ffn_down.weight", 5632) == TensorType::Q6_K) more_bits_down.push_back(l);
    }
    // i < n/8 (2), i >= 7n/8 (19), or (i - n/8) % 3 == 2.
    const std::vector<int> expected = {0, 1, 4, 7, 10, 13, 16, 19, 20, 21};
    CHECK(more_bits_v == expected);
    CHECK(more_bits_down == expected);
    CHECK(chooser.choose("output.weight", 2048) == TensorType::Q6_K);
    CHECK(chooser.choose("token_embd.weight", 2048) == TensorType::Q4_K);
    CHECK(chooser.n_fallback() == 0);
}

TEST_CASE("tensor order matches llama.cpp's loader", "[tools][quantize]") {
    const std::vector<std::string> names = {"token_embd.weight", "blk.10.attn_q.weight", "output.weight",
                                            "blk.2.ffn_up.weight", "blk.2.attn_k.weight", "output_norm.weight"};
    const auto order = ember::tools::llama_tensor_order(names);
    std::vector<std::string> sorted;
    for (auto i : order) sorted.push_back(names[i]);
    CHECK(sorted == std::vector<std::string>{"output.weight", "output_norm.weight", "token_embd.weight",
                                             "blk.2.attn_k.weight", "blk.2.ffn_up.weight", "blk.10.attn_q.weight"});
}

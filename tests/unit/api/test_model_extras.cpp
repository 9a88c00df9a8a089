// Model metadata accessors, the memory estimate, prefill progress and per-prefill TTFT.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "runtime/zeroed_memory.hpp"
#include "support/alloc_counter.hpp"
#include "support/shared_data.hpp"
#include "api_test_util.hpp"

using namespace api_test;

namespace {


// stories260K with a few more metadata entries of types it lacks.
ember::Model stories_with_extra_metadata() {
    const auto file = ember::gguf::File::open(ember_test::shared_file(kStories).string());
    ember::gguf::Writer w;
    w.copy_metadata(file);
    using ember::gguf::MetaValue;
    w.set_bool("test.flag", true);
    w.set("test.f64", MetaValue::f64(0.125));
    w.set("test.i64", MetaValue::i64(-5));
    w.set("test.u64_huge", MetaValue::u64(~0ull));
    w.set("test.nested", MetaValue::array(ember::gguf::ValueType::array,
                                          {MetaValue::strings({"a"}), MetaValue::strings({"b", "c"})}));
    for (const auto& t : file.tensors()) {
        w.add_tensor_view(t.name, t.type, std::vector<std::int64_t>(t.ne, t.ne + t.n_dims), {t.data, t.n_bytes});
    }
    const auto bytes = w.write_to_bytes();
    return ember::Model::load_from_memory(bytes.data(), bytes.size(), {.threads = 1});
}

}  // namespace

TEST_CASE("metadata: typed access to any GGUF key", "[api][metadata]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = stories_with_extra_metadata();
    const auto keys = model.metadata_keys();
    CHECK(keys.front() == "tokenizer.ggml.tokens");
    CHECK(std::find(keys.begin(), keys.end(), "llama.block_count") != keys.end());

    CHECK(model.metadata_type("general.architecture") == ember::MetadataType::string);
    CHECK(model.metadata_type("llama.block_count") == ember::MetadataType::integer);
    CHECK(model.metadata_type("llama.attention.layer_norm_rms_epsilon") == ember::MetadataType::floating);
    CHECK(model.metadata_type("test.flag") == ember::MetadataType::boolean);
    CHECK(model.metadata_type("tokenizer.ggml.tokens") == ember::MetadataType::array);
    CHECK(model.metadata_type("no.such.key") == ember::MetadataType::absent);

    CHECK(model.metadata_string("general.architecture") == "llama");
    CHECK(model.metadata_int("llama.block_count") == 5);
    CHECK(model.metadata_int("llama.context_length") == 2048);
    CHECK(model.metadata_int("test.i64") == -5);
    CHECK(*model.metadata_float("llama.attention.layer_norm_rms_epsilon") == Approx(1e-5).epsilon(1e-6));
    CHECK(model.metadata_float("test.f64") == 0.125);
    CHECK(model.metadata_float("llama.block_count") == 5.0);  // integers convert
    CHECK(model.metadata_bool("test.flag") == true);
    CHECK_FALSE(model.metadata_int("no.such.key").has_value());
    CHECK_FALSE(model.metadata_string("no.such.key").has_value());
    CHECK_FALSE(model.metadata_string_array("no.such.key").has_value());

    const auto tokens = model.metadata_string_array("tokenizer.ggml.tokens");
    REQUIRE(tokens.has_value());
    CHECK(tokens->size() == 512);
    CHECK((*tokens)[1] == "<s>");
    CHECK(model.metadata_float_array("tokenizer.ggml.scores")->size() == 512);
    CHECK(model.metadata_int_array("tokenizer.ggml.token_type")->at(0) == 2);

    CHECK_THROWS_WITH(model.metadata_int("general.architecture"),
                      Catch::Contains("'general.architecture' holds string, not an integer"));
    CHECK_THROWS_WITH(model.metadata_string("llama.block_count"), Catch::Contains("not a string"));
    CHECK_THROWS_WITH(model.metadata_bool("llama.block_count"), Catch::Contains("not a bool"));
    CHECK_THROWS_WITH(model.metadata_float("test.flag"), Catch::Contains("not a number"));
    CHECK_THROWS_WITH(model.metadata_int("test.u64_huge"), Catch::Contains("test.u64_huge"));
    CHECK_THROWS_WITH(model.metadata_int_array("tokenizer.ggml.tokens"), Catch::Contains("array of string"));
    CHECK_THROWS_WITH(model.metadata_string_array("test.nested"), Catch::Contains("array of array"));
    CHECK_THROWS_WITH(model.metadata_string_array("general.name"), Catch::Contains("not an array of strings"));
}

TEST_CASE("memory estimate: from the header, an upper bound of what a session allocates", "[api][memory]") {
    EMBER_REQUIRE_SHARED(kStories);
    const std::string path = ember_test::shared_file(kStories).string();
    const auto model = ember::Model::load(path, {.threads = 2});
    // n_layer 5, n_head_kv 4 x head_dim 8 = 32 values per key or value row.
    const ember::SessionOptions options{.context = 256, .threads = 2, .batch = 64};
    const ember::MemoryEstimate e = ember::Model::estimate_memory(path, options);
    CHECK(e.weight_bytes == model.info().weight_bytes);
    CHECK(e.kv_bytes_per_token_f32 == 2 * 5 * 32 * 4);
    CHECK(e.kv_bytes_per_token_f16 == 2 * 5 * 32 * 2);
    CHECK(e.kv_bytes_per_token_q8_0 == 2 * 5 * 34);
    CHECK(e.context == 256);
    CHECK(e.session_bytes == e.kv_bytes_per_token_f32 * 256 + e.scratch_bytes);
    CHECK(e.total_bytes == e.weight_bytes + e.session_bytes);
    CHECK(ember::Model::estimate_memory(path).context == 2048);  // default: training context, <= 4096

    for (const ember::SessionOptions& o : {options, ember::SessionOptions{.context = 128, .threads = 1, .logits_all = true},
                                           ember::SessionOptions{.context = 2048, .threads = 2, .batch = 512}}) {
        const ember::MemoryEstimate est = ember::Model::estimate_memory(path, o);
        ember_test::g_allocated_bytes = 0;
        const std::size_t mapped_before = ember::detail::mapped_zeroed_bytes();  // large scratch bypasses new
        ember_test::g_counting = true;
        std::optional<ember::Session> session;
        session.emplace(model, o);
        ember_test::g_counting = false;
        const long actual = ember_test::g_allocated_bytes.load() +
                            static_cast<long>(ember::detail::mapped_zeroed_bytes() - mapped_before);
        INFO("context " << o.context << ": estimate " << est.session_bytes << ", allocated " << actual);
        CHECK(est.session_bytes >= actual);
        CHECK(est.session_bytes <= 2 * actual + 131072);
    }
    CHECK_THROWS_WITH(ember::Model::estimate_memory("/nonexistent.gguf"), Catch::Contains("/nonexistent.gguf"));
    CHECK_THROWS_AS(ember::Model::estimate_memory(path, {.batch = 0}), ember::Error);
}

TEST_CASE("memory estimate: a hostile header's sizes saturate instead of overflowing", "[api][memory]") {
    EMBER_REQUIRE_SHARED(kStories);
    // 2^24 layers of 2^24-wide keys and values (the keys' upper bounds): 2^51 bytes a token, so a
    // context of 2^30 tokens passes 2^63.
    const auto file = ember::gguf::File::open(ember_test::shared_file(kStories).string());
    ember::gguf::Writer w;
    w.copy_metadata(file);
    w.set_u32("llama.block_count", 1u << 24);
    w.set_u32("llama.embedding_length", 1u << 24);
    w.set_u32("llama.attention.head_count", 1u << 12);
    w.set_u32("llama.attention.head_count_kv", 1u << 12);
    w.set_u32("llama.rope.dimension_count", 1u << 12);
    const std::string path = (std::filesystem::temp_directory_path() / "ember-estimate-overflow.gguf").string();
    w.write_to_file(path);
    const ember::MemoryEstimate e = ember::Model::estimate_memory(path, {.context = 1 << 30});
    std::filesystem::remove(path);
    CHECK(e.kv_bytes_per_token_f32 == std::int64_t{1} << 51);
    CHECK(e.session_bytes == std::numeric_limits<std::int64_t>::max());
    CHECK(e.total_bytes == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("session: progress during prefill and TTFT of every prefill", "[api][metrics]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(ember_test::shared_file(kStories).string(), {.threads = 2});
    ember::Session session(model, {.context = 128, .batch = 4});
    std::vector<std::pair<std::int64_t, std::int64_t>> calls;
    session.set_progress_callback([&](std::int64_t done, std::int64_t total) { calls.emplace_back(done, total); });
    const auto first = model.tokenize("Once upon a time, there was");  // 8 tokens: 2 chunks
    REQUIRE(first.size() == 8);
    REQUIRE(session.prefill(first) == ember::Status::ok);
    CHECK(calls == std::vector<std::pair<std::int64_t, std::int64_t>>{{4, 8}, {8, 8}});
    const ember::Metrics m1 = session.metrics();
    CHECK(m1.prefills == 1);
    CHECK(m1.last_prompt_tokens == 8);
    CHECK(m1.last_ttft_seconds == m1.ttft_seconds);
    CHECK(m1.ttft_seconds > 0.0);

    calls.clear();
    REQUIRE(session.decode(300) == ember::Status::ok);
    const auto second = model.tokenize(" a little girl", {.add_bos = false});
    REQUIRE(session.prefill(second) == ember::Status::ok);
    CHECK(calls.back() == std::make_pair<std::int64_t, std::int64_t>(static_cast<std::int64_t>(second.size()),
                                                                       static_cast<std::int64_t>(second.size())));
    const ember::Metrics m2 = session.metrics();
    CHECK(m2.prefills == 2);
    CHECK(m2.last_prompt_tokens == static_cast<std::int64_t>(second.size()));
    CHECK(m2.ttft_seconds == m1.ttft_seconds);  // the first prefill's
    CHECK(m2.last_ttft_seconds > 0.0);
    CHECK(m2.prefill_seconds == Approx(m1.prefill_seconds + m2.last_ttft_seconds));

    // A cancelled prefill does not count; removing the callback stops the calls.
    calls.clear();
    session.set_progress_callback({});
    session.set_cancel_callback([] { return true; });
    CHECK(session.prefill(second) == ember::Status::cancelled);
    CHECK(session.metrics().prefills == 2);
    CHECK(calls.empty());
}

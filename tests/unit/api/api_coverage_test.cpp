// Public API that the other tests never call: progress callback, options accessors and their
// defaults, status names, flush_stream, logits_at errors, ModelInfo, parse_special, a model
// whose own chat template is broken, and rope_freqs.weight. Expectations come from the GGUF file
// read directly or are written out literally, never from the function under test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "ember/ember.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "support/shared_data.hpp"
#include "api_test_util.hpp"

using namespace api_test;

namespace {

std::string stories_path() { return ember_test::shared_file(kStories).string(); }

ember::ModelOptions threads(int n) {
    ember::ModelOptions o;
    o.threads = n;
    return o;
}

ember::SessionOptions context(int n) {
    ember::SessionOptions o;
    o.context = n;
    return o;
}

std::vector<float> last_logits(const ember::Model& model, const std::vector<ember::Token>& ids) {
    ember::Session s(model, context(32));
    REQUIRE(s.prefill(ids) == ember::Status::ok);
    return {s.logits().begin(), s.logits().end()};
}

}  // namespace

TEST_CASE("status and stop-reason names", "[api]") {
    CHECK(std::string(ember::to_string(ember::Status::ok)) == "ok");
    CHECK(std::string(ember::to_string(ember::Status::context_full)) == "context_full");
    CHECK(std::string(ember::to_string(ember::Status::cancelled)) == "cancelled");
    CHECK(std::string(ember::to_string(ember::Status::invalid_input)) == "invalid_input");
    CHECK(std::string(ember::to_string(ember::StopReason::eog)) == "eog");
    CHECK(std::string(ember::to_string(ember::StopReason::stop_string)) == "stop_string");
    CHECK(std::string(ember::to_string(ember::StopReason::max_tokens)) == "max_tokens");
    CHECK(std::string(ember::to_string(ember::StopReason::context_full)) == "context_full");
    CHECK(std::string(ember::to_string(ember::StopReason::cancelled)) == "cancelled");
}

TEST_CASE("ModelOptions::on_progress reports loading from above 0 up to 1", "[api]") {
    EMBER_REQUIRE_SHARED(kStories);
    std::vector<float> seen;
    ember::ModelOptions o;
    o.threads = 1;
    o.on_progress = [&](float f) { seen.push_back(f); };
    const auto model = ember::Model::load(stories_path(), o);
    // One report per layer (5) and one at the end.
    REQUIRE(seen.size() == 6);
    CHECK(seen.front() > 0.0f);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
    CHECK(seen.back() == 1.0f);
    // Model::options() gives back what load() was given.
    CHECK(model.options().threads == 1);
    CHECK(static_cast<bool>(model.options().on_progress));
}

TEST_CASE("ModelInfo is what the GGUF file says", "[api]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(stories_path(), threads(1));
    const auto file = ember::gguf::File::open(stories_path());
    std::int64_t params = 0, bytes = 0;
    for (const auto& t : file.tensors()) {
        std::int64_t n = 1;
        for (std::uint32_t d = 0; d < t.n_dims; ++d) n *= static_cast<std::int64_t>(t.ne[d]);
        params += n;
        bytes += static_cast<std::int64_t>(t.n_bytes);
    }
    const auto& info = model.info();
    CHECK(info.name == std::string(file.get_string_or("general.name", "")));
    CHECK(!info.name.empty());
    CHECK(info.n_ctx_train == file.get_u32("llama.context_length"));
    CHECK(info.n_ctx_train == 2048);
    CHECK(info.n_ff == 172);
    CHECK(info.n_ff == file.get_u32("llama.feed_forward_length"));
    CHECK(info.n_params == params);
    CHECK(info.weight_bytes == bytes);
    CHECK(info.weight_bytes == info.n_params * 4);  // all F32
    CHECK(info.file_type == "F32");

    const auto q4 = "models/stories260K-Q4_0.gguf";
    if (EMBER_SHARED_MISSING(q4)) return;
    const auto model_q4 = ember::Model::load(ember_test::shared_file(q4).string(), threads(1));
    CHECK(model_q4.info().file_type == "Q4_0");
    CHECK(model_q4.info().n_params == params);
    CHECK(model_q4.info().weight_bytes < bytes / 3);
}

TEST_CASE("SessionOptions defaults: context 0 is the training context, threads 0 the model's", "[api]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(stories_path(), threads(0));
    CHECK(model.options().threads == 0);
    ember::Session s(model);  // context 0, threads 0: all hardware threads
    CHECK(s.context() == 2048);  // llama.context_length of stories260K (below the 4096 cap)
    CHECK(s.options().context == 0);
    CHECK(s.options().threads == 0);
    CHECK(s.options().batch == 512);
    CHECK(s.options().logits_all == false);
    const std::vector<ember::Token> ids = {1, 403, 407, 261, 378};
    REQUIRE(s.prefill(ids) == ember::Status::ok);
    // Results never depend on the thread count: the default equals one thread exactly.
    const auto one_thread = ember::Model::load(stories_path(), threads(1));
    ember::Session s1(one_thread, context(128));
    REQUIRE(s1.prefill(ids) == ember::Status::ok);
    CHECK(std::equal(s.logits().begin(), s.logits().end(), s1.logits().begin(), s1.logits().end()));

    ember::SessionOptions o;
    o.context = 40;
    o.batch = 7;
    o.logits_all = true;
    o.n_keep = 3;
    o.context_shift = true;
    ember::Session s2(model, o);
    CHECK(s2.context() == 40);
    CHECK(s2.options().batch == 7);
    CHECK(s2.options().logits_all);
    CHECK(s2.options().n_keep == 3);
    CHECK(s2.options().context_shift);
}

TEST_CASE("logits_at: rows of the last prefill chunk, errors otherwise", "[api]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(stories_path(), threads(1));
    const std::vector<ember::Token> ids = {1, 403, 407, 261, 378};
    ember::Session plain(model, context(32));
    REQUIRE(plain.prefill(ids) == ember::Status::ok);
    CHECK_THROWS_WITH(plain.logits_at(0), Catch::Contains("logits_all"));

    ember::SessionOptions o;
    o.context = 32;
    o.logits_all = true;
    ember::Session s(model, o);
    CHECK_THROWS_WITH(s.logits_at(0), Catch::Contains("logits_at(0)"));  // nothing prefilled
    REQUIRE(s.prefill(ids) == ember::Status::ok);
    CHECK_THROWS_WITH(s.logits_at(5), Catch::Contains("logits_at(5)") && Catch::Contains("5 rows"));
    CHECK_THROWS_WITH(s.logits_at(-1), Catch::Contains("logits_at(-1)"));
    CHECK(std::equal(s.logits_at(4).begin(), s.logits_at(4).end(), s.logits().begin(), s.logits().end()));
    // Row i predicts token i + 1: it equals the last logits of a session that stopped there.
    const auto row2 = s.logits_at(2);
    ember::Session short_session(model, context(32));
    REQUIRE(short_session.prefill(std::vector<ember::Token>(ids.begin(), ids.begin() + 3)) == ember::Status::ok);
    float m = 0;
    for (std::size_t i = 0; i < row2.size(); ++i) m = std::max(m, std::fabs(row2[i] - short_session.logits()[i]));
    CHECK(m <= 1e-4f);
}

TEST_CASE("flush_stream releases a held-back partial character as U+FFFD and restarts", "[api]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(stories_path(), threads(1));
    ember::Session s(model, context(16));
    // SPM byte tokens: <0xXX> is id 3 + XX in this vocabulary.
    const ember::Token byte_e2 = 3 + 0xE2, byte_82 = 3 + 0x82, byte_ac = 3 + 0xAC;
    REQUIRE(model.token_to_piece(byte_e2) == "\xE2");
    CHECK(s.flush_stream().empty());
    CHECK(s.detokenize_stream(byte_e2).empty());  // first byte of a 3-byte character: held
    CHECK(s.detokenize_stream(byte_82).empty());
    CHECK(s.flush_stream() == "\xEF\xBF\xBD");  // the incomplete character
    CHECK(s.flush_stream().empty());
    // The stream starts afresh: a whole euro sign comes through on its last byte.
    CHECK(s.detokenize_stream(byte_e2).empty());
    CHECK(s.detokenize_stream(byte_82).empty());
    CHECK(s.detokenize_stream(byte_ac) == "\xE2\x82\xAC");
    CHECK(s.flush_stream().empty());
}

TEST_CASE("Model::tokenize with parse_special matches control tokens written in the text", "[api]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(stories_path(), threads(1));
    ember::TokenizeOptions special;
    special.add_bos = false;
    special.parse_special = true;
    ember::TokenizeOptions plain;
    plain.add_bos = false;
    // "Once" is 403 after a space-prefixed start (see the greedy reference ids).
    CHECK(model.tokenize("</s>Once", special).front() == 2);
    CHECK(model.tokenize("Once</s>", special).back() == 2);
    const auto as_text = model.tokenize("</s>Once", plain);
    CHECK(std::find(as_text.begin(), as_text.end(), 2) == as_text.end());
    CHECK(as_text.size() > 2);
    CHECK(model.detokenize(as_text) == "</s>Once");
}

TEST_CASE("a model whose own chat template does not parse loads, and using it names the error", "[api]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto bytes = rewrite_stories([](auto& w, const auto& file) {
        w.set_string("tokenizer.chat_template", "{% for m in messages %}{{ m.content }\n");
        add_all_tensors(w, file);
    });
    const auto model = ember::Model::load_from_memory(bytes.data(), bytes.size(), threads(1));
    CHECK(model.has_chat_template());
    const std::vector<ember::ChatMessage> msgs = {{"user", "Hi"}};
    CHECK_THROWS_WITH(model.apply_chat_template(msgs, true),
                      Catch::Contains("tokenizer.chat_template") && Catch::Contains("line 1, column"));
    // An override still works.
    CHECK(model.apply_chat_template(msgs, false, "{{ messages[0].content }}") == "Hi");
}

TEST_CASE("rope_freqs.weight divides the RoPE frequencies", "[api]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto file = ember::gguf::File::open(stories_path());
    const auto n_rot = file.get_u32("llama.rope.dimension_count");
    REQUIRE(n_rot == 8);
    REQUIRE(file.find("llama.rope.freq_base") == nullptr);  // llama's default base, 10000
    auto model_with = [&](const std::vector<float>& factors, float freq_base) {
        const auto bytes = rewrite_stories([&](auto& w, const auto& f) {
            if (freq_base > 0) w.set_f32("llama.rope.freq_base", freq_base);
            add_all_tensors(w, f);
            if (factors.empty()) return;
            std::vector<std::uint8_t> data(factors.size() * sizeof(float));
            std::memcpy(data.data(), factors.data(), data.size());
            w.add_tensor("rope_freqs.weight", ember::TensorType::F32, {static_cast<std::int64_t>(factors.size())}, data);
        });
        return ember::Model::load_from_memory(bytes.data(), bytes.size(), threads(1));
    };
    const auto plain = ember::Model::load(stories_path(), threads(1));
    const std::vector<ember::Token> ids = {1, 403, 407, 261, 378, 432, 383};
    // Factors of 1 change nothing.
    CHECK(last_logits(model_with(std::vector<float>(n_rot / 2, 1.0f), 0), ids) == last_logits(plain, ids));
    // Pair i rotates by pos * base^(-2i/n_rot) / factor_i. With factor_i = base^(-2i/n_rot) every
    // pair turns by pos radians, which is what freq_base = 1 gives without factors.
    std::vector<float> factors;
    for (std::uint32_t i = 0; i < n_rot / 2; ++i)
        factors.push_back(static_cast<float>(std::pow(10000.0, -2.0 * i / n_rot)));
    const auto divided = last_logits(model_with(factors, 0), ids);
    const auto base_one = last_logits(model_with({}, 1.0f), ids);
    CHECK(max_abs_diff(divided, base_one) < 1e-3f);
    CHECK(max_abs_diff(divided, last_logits(plain, ids)) > 1e-2f);  // the comparison can fail
    // A wrong length is named.
    CHECK_THROWS_WITH(model_with(std::vector<float>(3, 1.0f), 0), Catch::Contains("rope_freqs.weight"));
}

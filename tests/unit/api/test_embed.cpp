// Model::embed: pooled final hidden states (after the output norm), checked against what the
// logits are made of, against prefixes, and alone against batched.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "api/model_impl.hpp"
#include "ember/ember.hpp"
#include "kernels/matmul.hpp"
#include "support/shared_data.hpp"
#include "api_test_util.hpp"

using namespace api_test;

namespace {

using Pooling = ember::EmbedOptions::Pooling;


double norm(const std::vector<float>& v) {
    double s = 0.0;
    for (float x : v) s += static_cast<double>(x) * x;
    return std::sqrt(s);
}

}  // namespace

TEST_CASE("embed: the last token's state is what the output layer turns into logits", "[api][embed]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(ember_test::shared_file(kStories).string(), {.threads = 2});
    const auto ids = model.tokenize("Once upon a time, there was a little girl");
    const auto state = model.embed_tokens({ids}, {.pooling = Pooling::last, .normalize = false}).front();
    REQUIRE(state.size() == 64);

    ember::Session session(model, {.context = 64});
    REQUIRE(session.prefill(ids) == ember::Status::ok);
    // logits[t] = output row t . state
    const auto& impl = *ember::detail::ModelAccess::impl(model);
    const ember::gguf::File& file = impl.file;
    const ember::gguf::TensorInfo* output = file.find_tensor("output.weight");
    if (output == nullptr) output = file.find_tensor("token_embd.weight");
    REQUIRE(output != nullptr);
    std::vector<float> row(64);
    float worst = 0.0f;
    for (std::int64_t t = 0; t < model.n_vocab(); ++t) {
        ember::kernels::dequantize_row(*output, t, row.data());
        double dot = 0.0;
        for (std::size_t k = 0; k < row.size(); ++k) dot += static_cast<double>(row[k]) * state[k];
        worst = std::max(worst, std::abs(static_cast<float>(dot) - session.logits()[static_cast<std::size_t>(t)]));
    }
    CHECK(worst < 1e-3f);
}

TEST_CASE("embed: mean pooling averages the states of every prefix's last token", "[api][embed]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(ember_test::shared_file(kStories).string(), {.threads = 2});
    const auto ids = model.tokenize("The little dog ran to the park");
    std::vector<float> mean(64, 0.0f);
    for (std::size_t n = 1; n <= ids.size(); ++n) {
        const std::vector<ember::Token> prefix(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
        const auto s = model.embed_tokens({prefix}, {.pooling = Pooling::last, .normalize = false}).front();
        for (std::size_t k = 0; k < s.size(); ++k) mean[k] += s[k] / static_cast<float>(ids.size());
    }
    const auto pooled = model.embed_tokens({ids}, {.normalize = false}).front();
    CHECK(max_abs_diff(pooled, mean) < 1e-4f);

    // Normalised by default: the same direction with unit length.
    const auto unit = model.embed_tokens({ids}).front();
    CHECK(norm(unit) == Approx(1.0).epsilon(1e-5));
    const double n = norm(pooled);
    for (std::size_t k = 0; k < unit.size(); ++k) CHECK(unit[k] == Approx(pooled[k] / n).margin(1e-5));
}

TEST_CASE("embed: batched texts equal texts alone; long texts run in chunks", "[api][embed]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(ember_test::shared_file(kStories).string(), {.threads = 2});
    const std::vector<std::string> texts = {"Once upon a time", "The little dog", "",
                                            "She loved to play outside in the park with her friends."};
    for (Pooling pooling : {Pooling::mean, Pooling::last}) {
        const auto together = model.embed(texts, {.pooling = pooling});
        REQUIRE(together.size() == texts.size());
        for (std::size_t i = 0; i < texts.size(); ++i) {
            INFO("text " << i);
            CHECK(max_abs_diff(together[i], model.embed(texts[i], {.pooling = pooling})) < 1e-5f);
            // Three tokens per forward pass: every text in chunks, groups of one.
            CHECK(max_abs_diff(together[i], model.embed(texts[i], {.pooling = pooling, .batch = 3})) < 1e-5f);
        }
    }
    // Similar texts are closer than different ones.
    const auto e = model.embed(std::vector<std::string>{"Once upon a time", "Once upon a time there", "red red red red"});
    auto dot = [](const std::vector<float>& a, const std::vector<float>& b) {
        double s = 0.0;
        for (std::size_t k = 0; k < a.size(); ++k) s += static_cast<double>(a[k]) * b[k];
        return s;
    };
    CHECK(dot(e[0], e[1]) > dot(e[0], e[2]));
    CHECK(model.embed(std::vector<std::string>{}).empty());
}

TEST_CASE("embed: bad input is an ember::Error naming it", "[api][embed]") {
    EMBER_REQUIRE_SHARED(kStories);
    const auto model = ember::Model::load(ember_test::shared_file(kStories).string(), {.threads = 1});
    CHECK_THROWS_WITH(model.embed("", {.add_bos = false}), Catch::Contains("text 0 has no tokens"));
    CHECK_THROWS_WITH(model.embed("x", {.batch = 0}), Catch::Contains("batch"));
    CHECK_THROWS_WITH(model.embed("x", {.threads = -1}), Catch::Contains("threads"));
    CHECK_THROWS_WITH(model.embed_tokens({{1, 2}, {1, 512}}), Catch::Contains("text 1 has token id 512"));
    const std::vector<ember::Token> too_long(static_cast<std::size_t>(model.info().n_ctx_train) + 1, 300);
    CHECK_THROWS_WITH(model.embed_tokens({too_long}), Catch::Contains("training context"));
}

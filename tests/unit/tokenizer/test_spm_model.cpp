// The sentencepiece .model path gives the same ids as the GGUF path of the same vocabulary.
#include <catch2/catch.hpp>

#include "ember/error.hpp"
#include "tokenizer_test_util.hpp"

using ember::Token;
using ember::tokenizer::Tokenizer;

TEST_CASE("llama2 tokenizer.model matches ggml-vocab-llama-spm.gguf", "[tokenizer][spm]") {
    EMBER_REQUIRE_SHARED("tokenizer/llama2-tokenizer.model");
    EMBER_REQUIRE_SHARED("tokenizer/ggml-vocab-llama-spm.gguf");
    const auto model = Tokenizer::from_spm_model(ember_test::shared_file("tokenizer/llama2-tokenizer.model").string());
    const auto& gguf = tok_test::shared_tokenizer("tokenizer/ggml-vocab-llama-spm.gguf");
    CHECK(model->n_vocab() == gguf.n_vocab());
    CHECK(model->bos() == gguf.bos());
    CHECK(model->eos() == gguf.eos());
    CHECK(model->unk() == gguf.unk());
    CHECK(model->strips_leading_space());
    for (Token id = 0; id < gguf.n_vocab(); ++id) {
        REQUIRE(model->token_text(id) == gguf.token_text(id));
        REQUIRE(model->token_type(id) == gguf.token_type(id));
    }
    auto cases = tok_test::read_cases(ember_test::shared_file("tokenizer/ggml-vocab-llama-spm.gguf.inp").string());
    const auto expected = tok_test::read_expected(ember_test::shared_file("tokenizer/ggml-vocab-llama-spm.gguf.out").string());
    for (std::size_t i = 0; i < cases.size(); ++i) {
        INFO("case " << i << ": '" << cases[i] << "'");
        CHECK(model->encode(cases[i], false, false) == expected[i]);
    }
    std::mt19937 rng(42);
    for (int i = 0; i < 300; ++i) cases.push_back(tok_test::random_utf8(rng, 1 + static_cast<int>(rng() % 50)));
    for (const auto& s : cases) {
        INFO("'" << s << "'");
        CHECK(model->encode(s, true, true) == gguf.encode(s, true, true));
        CHECK(model->decode(model->encode(s, false, false)) == s);
    }
}

TEST_CASE("bad sentencepiece models throw ember::Error", "[tokenizer][spm]") {
    CHECK_THROWS_AS(Tokenizer::from_spm_model("/nonexistent/tokenizer.model"), ember::Error);
    CHECK_THROWS_AS(Tokenizer::from_spm_proto("", "empty.model"), ember::Error);
    CHECK_THROWS_AS(Tokenizer::from_spm_proto("\x0a\xff\xff\xff\xff\x0f", "trunc.model"), ember::Error);
    CHECK_THROWS_AS(Tokenizer::from_spm_proto("\xff", "bad.model"), ember::Error);
    EMBER_REQUIRE_SHARED("tokenizer/llama2-tokenizer.model");
    const std::string bytes = tok_test::read_file(ember_test::shared_file("tokenizer/llama2-tokenizer.model").string());
    for (const std::size_t cut : {std::size_t{1}, std::size_t{100}, bytes.size() / 2, bytes.size() - 3}) {
        INFO("cut at " << cut);
        CHECK_THROWS_AS(Tokenizer::from_spm_proto(std::string_view(bytes).substr(0, cut), "cut.model"), ember::Error);
    }
}

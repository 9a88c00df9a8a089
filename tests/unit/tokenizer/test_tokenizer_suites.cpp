// llama.cpp's vocab suites: every case of ggml-vocab-*.gguf.inp, tokenized without BOS, must equal
// the matching line of the .gguf.out file; decoding gives the text back.
#include <catch2/catch.hpp>

#include <cstdio>

#include "tokenizer_test_util.hpp"

using ember::Token;

namespace {

void run_suite(const std::string& name) {
    const std::string base = "tokenizer/ggml-vocab-" + name + ".gguf";
    EMBER_REQUIRE_SHARED(base);
    EMBER_REQUIRE_SHARED(base + ".inp");
    const auto& tok = tok_test::shared_tokenizer(base);
    const auto cases = tok_test::read_cases(ember_test::shared_file(base + ".inp").string());
    const auto expected = tok_test::read_expected(ember_test::shared_file(base + ".out").string());
    REQUIRE(cases.size() == expected.size());
    REQUIRE(!cases.empty());
    int passed = 0, round_trips = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const std::vector<Token> ids = tok.encode(cases[i], false, false);
        INFO(name << " case " << i << ": '" << cases[i] << "'\n got:     " << tok_test::ids_to_string(ids)
                  << "\n expected:" << tok_test::ids_to_string(expected[i]));
        CHECK(ids == expected[i]);
        if (ids == expected[i]) ++passed;
        const std::string back = tok.decode(ids);
        CHECK(back == cases[i]);
        if (back == cases[i]) ++round_trips;
    }
    std::printf("vocab suite %-10s %d/%zu cases, %d/%zu round trips\n", name.c_str(), passed,
                cases.size(), round_trips, cases.size());
}

}  // namespace

TEST_CASE("vocab suite llama-spm", "[tokenizer][suite]") { run_suite("llama-spm"); }
TEST_CASE("vocab suite llama-bpe", "[tokenizer][suite]") { run_suite("llama-bpe"); }
TEST_CASE("vocab suite qwen2", "[tokenizer][suite]") { run_suite("qwen2"); }
TEST_CASE("vocab suite gpt-2", "[tokenizer][suite]") { run_suite("gpt-2"); }

TEST_CASE("random UTF-8 round trips through every shared vocabulary", "[tokenizer][roundtrip]") {
    for (const char* name : {"llama-spm", "llama-bpe", "qwen2", "gpt-2"}) {
        const std::string base = std::string("tokenizer/ggml-vocab-") + name + ".gguf";
        EMBER_REQUIRE_SHARED(base);
        const auto& tok = tok_test::shared_tokenizer(base);
        std::mt19937 rng(1234);
        for (int i = 0; i < 300; ++i) {
            const std::string s = tok_test::random_utf8(rng, 1 + static_cast<int>(rng() % 40));
            const auto ids = tok.encode(s, false, false);
            INFO(name << ": '" << s << "' ->" << tok_test::ids_to_string(ids));
            REQUIRE(tok.decode(ids) == s);
            for (const Token id : ids) REQUIRE((id >= 0 && id < tok.n_vocab()));
        }
    }
}

TEST_CASE("byte-level BPE round trips arbitrary bytes", "[tokenizer][roundtrip]") {
    for (const char* name : {"llama-bpe", "qwen2", "gpt-2"}) {
        const std::string base = std::string("tokenizer/ggml-vocab-") + name + ".gguf";
        EMBER_REQUIRE_SHARED(base);
        const auto& tok = tok_test::shared_tokenizer(base);
        std::mt19937 rng(99);
        for (int i = 0; i < 200; ++i) {
            std::string s(1 + rng() % 30, '\0');
            for (char& c : s) c = static_cast<char>(rng() & 0xFF);
            const auto ids = tok.encode(s, false, false);
            REQUIRE(tok.decode(ids) == s);
        }
    }
}

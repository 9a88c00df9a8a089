// The pre-tokenizers no shared vocabulary exercises (tekken, smollm/starcoder, gpt-4o, falcon,
// default): each splits one text into the words its regex list gives, written out by hand from
// the regexes' definitions (llama.cpp's llama-vocab.cpp lists, Hugging Face tokenizer.json).
// The text mixes camel case, digit runs, a contraction and a space before digits, where they differ.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/pretokenizer.hpp"

namespace {

std::vector<std::string> split(std::string_view pre, std::string_view text) {
    ember::tokenizer::PreTokenizer p(pre, "test.gguf");
    std::vector<std::string_view> words;
    p.split(text, words);
    return {words.begin(), words.end()};
}

using Words = std::vector<std::string>;
constexpr std::string_view kText = "HelloWorld 12345 it's 12";

}  // namespace

TEST_CASE("pre-tokenizers split as their regex lists define", "[tokenizer][pre]") {
    // GPT-2: letters, digits (with one leading space) and other runs; contractions apart.
    CHECK(split("gpt-2", kText) == Words{"HelloWorld", " 12345", " it", "'s", " 12"});
    // GPT-4o: a capitalised word is a word (so camel case splits), contractions stay attached,
    // digits in groups of up to three, a space before digits is a word of its own.
    CHECK(split("gpt-4o", kText) == Words{"Hello", "World", " ", "123", "45", " it's", " ", "12"});
    // Tekken: like GPT-4o without contractions, single digits.
    CHECK(split("tekken", kText) == Words{"Hello", "World", " ", "1", "2", "3", "4", "5", " it", "'s", " ", "1", "2"});
    // smollm (StarCoder): every digit alone first, then GPT-2 on the rest.
    const Words starcoder = {"HelloWorld", " ", "1", "2", "3", "4", "5", " it", "'s", " ", "1", "2"};
    CHECK(split("smollm", kText) == starcoder);
    CHECK(split("starcoder", kText) == starcoder);
    // Falcon: punctuation runs first, then GPT-2, then runs of three digits.
    CHECK(split("falcon", kText) == Words{"HelloWorld", " ", "123", "45", " it", "'", "s", " 12"});
    // llama.cpp's default list (also an empty name): as Falcon plus digit runs apart from spaces.
    const Words by_default = {"HelloWorld", " ", "123", "45", " it", "'", "s", " ", "12"};
    CHECK(split("default", kText) == by_default);
    CHECK(split("", kText) == by_default);
}

TEST_CASE("tekken emits a word that is a token whole (ignore_merges), the others merge", "[tokenizer][pre]") {
    CHECK(ember::tokenizer::PreTokenizer("tekken", "t.gguf").ignore_merges());
    for (const char* pre : {"gpt-2", "gpt-4o", "smollm", "falcon", "default"})
        CHECK_FALSE(ember::tokenizer::PreTokenizer(pre, "t.gguf").ignore_merges());
}

TEST_CASE("pre-tokenizers keep every byte, in order", "[tokenizer][pre]") {
    const std::string text = "Tabs\tand\r\nnewlines  \n\n, ünïcödé 😀 x/y 1234567 ``MixedCASEWords``";
    for (const char* pre : {"gpt-2", "gpt-4o", "tekken", "smollm", "falcon", "default", "llama-bpe", "qwen2"}) {
        INFO(pre);
        std::string joined;
        for (const auto& w : split(pre, text)) {
            CHECK(!w.empty());
            joined += w;
        }
        CHECK(joined == text);
    }
}

// Special tokens, BOS/EOS flags, end-of-generation tokens and piece rendering.
#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "ember/error.hpp"
#include "tokenizer_test_util.hpp"

using ember::Token;

namespace {
bool contains(const std::vector<Token>& ids, Token id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}
}  // namespace

TEST_CASE("SPM: BOS, pieces, dummy prefix after special tokens", "[tokenizer][special]") {
    EMBER_REQUIRE_SHARED("tokenizer/ggml-vocab-llama-spm.gguf");
    const auto& tok = tok_test::shared_tokenizer("tokenizer/ggml-vocab-llama-spm.gguf");
    CHECK(tok.n_vocab() == 32000);
    CHECK(tok.bos() == 1);
    CHECK(tok.eos() == 2);
    CHECK(tok.add_bos_default());
    CHECK_FALSE(tok.add_eos_default());
    CHECK(tok.encode("Hello world", true, false) == std::vector<Token>{1, 15043, 3186});
    CHECK(tok.encode("Hello world", false, false) == std::vector<Token>{15043, 3186});
    CHECK(tok.encode("", true, false) == std::vector<Token>{1});
    CHECK(tok.encode("", false, false).empty());
    // "<s>" is text unless parse_special; after a special token the text gets the space prefix.
    CHECK(tok.encode("<s>Hello", false, true) == std::vector<Token>{1, 15043});
    CHECK_FALSE(contains(tok.encode("<s>Hello", false, false), 1));
    CHECK(tok.encode("Hello</s>", false, true).back() == 2);

    CHECK(tok.token_to_piece(15043) == " Hello");
    CHECK(tok.token_to_piece(13) == "\n");  // <0x0A>
    CHECK(tok.token_to_piece(2).empty());
    CHECK(tok.token_to_piece(2, true) == "</s>");
    CHECK(tok.token_to_piece(0).empty());  // <unk>
    CHECK(tok.decode(std::vector<Token>{1, 15043, 3186, 2}) == "Hello world");
    CHECK(tok.decode(std::vector<Token>{1, 15043, 3186, 2}, true) == "<s> Hello world</s>");
    CHECK_THROWS_AS(tok.token_to_piece(32000), ember::Error);
    CHECK_THROWS_AS(tok.token_to_piece(-1), ember::Error);
    CHECK_THROWS_AS(tok.decode(std::vector<Token>{5, 40000}), ember::Error);
    CHECK(tok.is_end_of_generation(2));
    CHECK_FALSE(tok.is_end_of_generation(1));
    CHECK_FALSE(tok.is_end_of_generation(15043));
    CHECK(tok.is_control(1));
    CHECK_FALSE(tok.is_control(15043));
}

TEST_CASE("Llama 3 BPE: BOS by default, EOT, control tokens", "[tokenizer][special]") {
    EMBER_REQUIRE_SHARED("tokenizer/ggml-vocab-llama-bpe.gguf");
    const auto& tok = tok_test::shared_tokenizer("tokenizer/ggml-vocab-llama-bpe.gguf");
    CHECK(tok.bos() == 128000);
    CHECK(tok.eos() == 128001);
    CHECK(tok.eot() == 128009);  // <|eot_id|> found by its text
    CHECK(tok.add_bos_default());
    CHECK(tok.is_end_of_generation(128001));
    CHECK(tok.is_end_of_generation(128009));
    CHECK_FALSE(tok.is_end_of_generation(128006));
    const std::string chat = "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>";
    const auto special = tok.encode(chat, true, true);
    REQUIRE(special.size() >= 5);
    CHECK(special[0] == 128000);
    CHECK(special[1] == 128006);
    CHECK(special.back() == 128009);
    const auto plain = tok.encode(chat, false, false);
    CHECK_FALSE(contains(plain, 128006));
    CHECK(tok.decode(plain) == chat);
    CHECK(tok.decode(special) == "user\n\nHi");
    CHECK(tok.decode(special, true) == "<|begin_of_text|>" + chat);
}

TEST_CASE("Qwen2 BPE: no BOS by default, <|im_end|> ends generation, user-defined tokens",
          "[tokenizer][special]") {
    EMBER_REQUIRE_SHARED("tokenizer/ggml-vocab-qwen2.gguf");
    const auto& tok = tok_test::shared_tokenizer("tokenizer/ggml-vocab-qwen2.gguf");
    CHECK_FALSE(tok.add_bos_default());
    CHECK(tok.encode("hi", true, false) == tok.encode("hi", false, false));
    CHECK(tok.is_end_of_generation(151645));  // <|im_end|>
    CHECK(tok.is_end_of_generation(151643));  // <|endoftext|>
    CHECK_FALSE(tok.is_end_of_generation(151644));
    const auto ids = tok.encode("<|im_start|>user\nhello<|im_end|>\n", false, true);
    REQUIRE(ids.size() >= 4);
    CHECK(ids.front() == 151644);
    CHECK(contains(ids, 151645));
    CHECK_FALSE(contains(tok.encode("<|im_start|>user", false, false), 151644));
    // User-defined tokens are matched whole even without parse_special (llama.cpp, HF).
    const Token pad = tok.find_token("[PAD151646]");
    REQUIRE(pad == 151646);
    CHECK(tok.token_type(pad) == ember::tokenizer::TokenType::user_defined);
    CHECK(tok.encode("a[PAD151646]b", false, false) ==
          std::vector<Token>{tok.encode("a", false, false)[0], pad, tok.encode("b", false, false)[0]});
    CHECK(tok.token_to_piece(pad) == "[PAD151646]");
}

TEST_CASE("GPT-2: byte-level pieces", "[tokenizer][special]") {
    EMBER_REQUIRE_SHARED("tokenizer/ggml-vocab-gpt-2.gguf");
    const auto& tok = tok_test::shared_tokenizer("tokenizer/ggml-vocab-gpt-2.gguf");
    CHECK_FALSE(tok.strips_leading_space());
    const Token space_the = tok.find_token("\xC4\xA0the");  // "Ġthe"
    REQUIRE(space_the >= 0);
    CHECK(tok.token_to_piece(space_the) == " the");
    CHECK(tok.decode(tok.encode(" leading space", false, false)) == " leading space");
    CHECK(tok.is_end_of_generation(50256));
}

TEST_CASE("stories260K model vocabulary loads", "[tokenizer][special]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto file = ember::gguf::File::open(ember_test::shared_file("models/stories260K.gguf").string());
    const auto tok = ember::tokenizer::Tokenizer::from_gguf(file);
    CHECK(tok->n_vocab() == 512);
    CHECK(tok->pad() == -1);  // 0xFFFFFFFF means none
    const std::string text = "Once upon a time, there was a little girl.";
    const auto ids = tok->encode(text, true, false);
    REQUIRE(ids.size() > 2);
    CHECK(ids[0] == 1);
    CHECK(tok->decode(ids) == text);
}

TEST_CASE("const methods are safe from many threads", "[tokenizer][threads]") {
    for (const char* name : {"llama-spm", "qwen2"}) {
        const std::string base = std::string("tokenizer/ggml-vocab-") + name + ".gguf";
        EMBER_REQUIRE_SHARED(base);
        EMBER_REQUIRE_SHARED(base + ".inp");
        const auto& tok = tok_test::shared_tokenizer(base);
        const auto cases = tok_test::read_cases(ember_test::shared_file(base + ".inp").string());
        std::vector<std::vector<Token>> want;
        for (const auto& c : cases) want.push_back(tok.encode(c, true, true));
        std::vector<int> mismatches(4, 0);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                for (int rep = 0; rep < 5; ++rep) {
                    for (std::size_t i = 0; i < cases.size(); ++i) {
                        const auto ids = tok.encode(cases[i], true, true);
                        if (ids != want[i] || tok.decode(ids) != tok.decode(want[i])) ++mismatches[t];
                    }
                }
            });
        }
        for (auto& th : threads) th.join();
        for (int t = 0; t < 4; ++t) CHECK(mismatches[t] == 0);
    }
}

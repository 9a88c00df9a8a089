// Tokenizer rules of the model families beside Llama: DeepSeek's pre-tokenizers, Phi-3's
// special tokens that swallow the whitespace after them, and the end-of-turn tokens of the chat
// formats (Qwen <|im_end|>, Gemma <end_of_turn>, Phi-3 <|end|>, Llama 3 <|eot_id|>).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gguf/gguf_writer.hpp"
#include "tokenizer/pretokenizer.hpp"
#include "tokenizer_test_util.hpp"

using ember::Token;

namespace {

std::vector<std::string> split(const char* pre, const std::string& text) {
    const ember::tokenizer::PreTokenizer p(pre, "test");
    std::vector<std::string_view> words;
    p.split(text, words);
    return {words.begin(), words.end()};
}

// The shared llama-spm vocabulary (Phi-3's base vocabulary) with `extra` control tokens
// appended and general.name set to `name`.
std::unique_ptr<ember::tokenizer::Tokenizer> spm_with(const std::string& name,
                                                      const std::vector<std::string>& extra) {
    const auto base = ember::gguf::File::open(ember_test::shared_file("tokenizer/ggml-vocab-llama-spm.gguf").string());
    std::vector<std::string> tokens;
    for (const auto& v : base.get_array("tokenizer.ggml.tokens").items) tokens.emplace_back(v.as_string("t"));
    std::vector<float> scores;
    for (const auto& v : base.get_array("tokenizer.ggml.scores").items) scores.push_back(v.as_f32("s"));
    std::vector<std::int32_t> types;
    for (const auto& v : base.get_array("tokenizer.ggml.token_type").items) types.push_back(static_cast<std::int32_t>(v.as_i64("y")));
    for (const auto& t : extra) {
        tokens.push_back(t);
        scores.push_back(0.0f);
        types.push_back(3);  // control
    }
    ember::gguf::Writer w;
    w.copy_metadata(base);
    w.set_string("general.name", name);
    w.set("tokenizer.ggml.tokens", ember::gguf::MetaValue::strings(tokens));
    w.set("tokenizer.ggml.scores", ember::gguf::MetaValue::f32s(scores));
    w.set("tokenizer.ggml.token_type", ember::gguf::MetaValue::i32s(types));
    const auto bytes = w.write_to_bytes();
    const auto file = ember::gguf::File::from_copy(bytes.data(), bytes.size(), name + ".gguf");
    return ember::tokenizer::Tokenizer::from_gguf(file);
}

}  // namespace

TEST_CASE("DeepSeek pre-tokenizers split as llama.cpp and Hugging Face do", "[tokenizer][pre]") {
    // The shared suites' case that GPT-2's regex gets wrong (" 4" and " ½" stay whole there).
    const std::vector<std::string> ied = {"ied", " ", "4", " ", "½", " months"};
    CHECK(split("deepseek-llm", "ied 4 ½ months") == ied);
    CHECK(split("deepseek-coder", "ied 4 ½ months") == ied);
    CHECK(split("gpt-2", "ied 4 ½ months") == std::vector<std::string>{"ied", " 4", " ½", " months"});
    // Numbers: whole runs (llm) or single digits (coder); CJK runs; newlines alone. (These
    // splits give llama.cpp's token ids on its deepseek vocabulary suites.)
    const std::string mixed = "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～";
    CHECK(split("deepseek-llm", mixed) ==
          std::vector<std::string>{"Hello", ",", " y", "'", "all", "!", " How", " are", " you", " 😁", " ?",
                                   "我想在", "apple", "工作", "1314151", "天", "～"});
    CHECK(split("deepseek-coder", mixed) ==
          std::vector<std::string>{"Hello", ",", " y", "'", "all", "!", " How", " are", " you", " 😁", " ?",
                                   "我想在", "apple", "工作", "1", "3", "1", "4", "1", "5", "1", "天", "～"});
    CHECK(split("deepseek-llm", "   Hello\n    Hello") == std::vector<std::string>{"  ", " Hello", "\n", "   ", " Hello"});
    CHECK(split("deepseek-coder", "3333") == std::vector<std::string>{"3", "3", "3", "3"});
    CHECK(split("deepseek-llm", "3333") == std::vector<std::string>{"3333"});
}

TEST_CASE("Phi-3: special tokens strip the whitespace after them, as llama.cpp", "[tokenizer][special]") {
    EMBER_REQUIRE_SHARED("tokenizer/ggml-vocab-llama-spm.gguf");
    const std::vector<std::string> extra = {"<|endoftext|>", "<|assistant|>", "<|end|>", "<|user|>"};
    const auto phi = spm_with("Phi-3-mini-4k-instruct", extra);
    const Token endoftext = 32000, assistant = 32001, end = 32002, user = 32003;
    const std::string turn = "<|user|>\nHello<|end|>\n<|assistant|>\n";
    // The newlines after the special tokens go; "Hello" then takes the dummy-prefix space.
    CHECK(phi->encode(turn, true, true) == std::vector<Token>{1, user, 15043, end, assistant});
    // <s> and <|endoftext|> keep what follows them; other special tokens strip it.
    const auto then = [&](Token first, const std::string& text) {
        std::vector<Token> v{first};
        for (const Token t : phi->encode(text, false, false)) v.push_back(t);
        return v;
    };
    CHECK(phi->encode("<s>\nHi", false, true) == then(1, "\nHi"));
    CHECK(phi->encode("<|endoftext|> Hi", false, true) == then(endoftext, " Hi"));
    CHECK(phi->encode("<|end|> \t\nHi", false, true) == then(end, "Hi"));
    CHECK(phi->encode("<|end|> Hi", false, true) != then(end, " Hi"));
    // Another model's tokens keep the whitespace.
    const auto other = spm_with("Mistral-7B", extra);
    CHECK(other->encode(turn, true, true).size() > 5);
}

TEST_CASE("end-of-turn tokens of the chat formats end generation", "[tokenizer][special]") {
    EMBER_REQUIRE_SHARED("tokenizer/ggml-vocab-llama-spm.gguf");
    const std::vector<std::string> turns = {"<|im_end|>", "<end_of_turn>", "<|end|>", "<|eot_id|>",
                                            "<|im_start|>", "<start_of_turn>"};
    const auto tok = spm_with("chat", turns);
    for (std::size_t i = 0; i < turns.size(); ++i) {
        const Token id = 32000 + static_cast<Token>(i);
        CAPTURE(turns[i]);
        CHECK(tok->is_end_of_generation(id) == (i < 4));
    }
}

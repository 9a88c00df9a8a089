// StreamDecoder: streamed text equals one-shot decoding and is valid UTF-8 at every step.
#include <catch2/catch.hpp>

#include "ember/error.hpp"
#include "tokenizer_test_util.hpp"

using ember::Token;
using ember::tokenizer::StreamDecoder;

namespace {

std::string sanitize(std::string_view s, bool final) {
    std::string out;
    const std::size_t used = ember::sanitize_utf8(s, final, out);
    if (!final) out += "|" + std::to_string(used);
    return out;
}

}  // namespace

TEST_CASE("sanitize_utf8 holds back incomplete sequences and replaces invalid ones", "[tokenizer][utf8]") {
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(sanitize("abc", false) == "abc|3");
    CHECK(sanitize("a\xE4\xBD", false) == "a|1");             // incomplete 3-byte sequence
    CHECK(sanitize("a\xE4\xBD", true) == "a" + fffd);
    CHECK(sanitize("\xE4\xBD\xA0", false) == "\xE4\xBD\xA0|3");  // complete
    CHECK(sanitize("\x80x", false) == fffd + "x|2");            // stray continuation byte
    CHECK(sanitize("\xC0\xAF", false) == fffd + fffd + "|2");   // overlong lead
    CHECK(sanitize("\xE4\xBDx", false) == fffd + "x|3");        // broken: provably invalid
    CHECK(sanitize("\xED\xA0\x80", false) == fffd + fffd + fffd + "|3");  // surrogate
    CHECK(sanitize("\xF0\x9F\x98", false) == "|0");
    CHECK(sanitize("\xF0\x9F\x98\x80", false) == "\xF0\x9F\x98\x80|4");
    CHECK(sanitize("\xF5\x80", false) == fffd + fffd + "|2");
    CHECK(ember::is_valid_utf8("h\xC3\xA9llo"));
    CHECK_FALSE(ember::is_valid_utf8("\xC3"));
}

TEST_CASE("streaming decode equals one-shot decode for every suite case", "[tokenizer][stream]") {
    for (const char* name : {"llama-spm", "llama-bpe", "qwen2", "gpt-2"}) {
        const std::string base = std::string("tokenizer/ggml-vocab-") + name + ".gguf";
        EMBER_REQUIRE_SHARED(base);
        EMBER_REQUIRE_SHARED(base + ".inp");
        const auto& tok = tok_test::shared_tokenizer(base);
        auto cases = tok_test::read_cases(ember_test::shared_file(base + ".inp").string());
        std::mt19937 rng(7);
        for (int i = 0; i < 50; ++i) cases.push_back(tok_test::random_utf8(rng, 30));
        StreamDecoder stream(tok);
        for (const auto& text : cases) {
            const auto ids = tok.encode(text, true, false);
            stream.reset();
            std::string streamed;
            for (const Token id : ids) {
                const std::string part = stream.push(id);
                REQUIRE(ember::is_valid_utf8(part));
                streamed += part;
            }
            streamed += stream.flush();
            INFO(name << ": '" << text << "'");
            CHECK(streamed == tok.decode(ids));
        }
    }
}

TEST_CASE("streaming holds back a split multi-byte character", "[tokenizer][stream]") {
    EMBER_REQUIRE_SHARED("tokenizer/ggml-vocab-llama-spm.gguf");
    const auto& tok = tok_test::shared_tokenizer("tokenizer/ggml-vocab-llama-spm.gguf");
    // 🦙 has no token in the Llama 2 vocabulary: it comes out as four byte tokens.
    const auto ids = tok.encode("\xF0\x9F\xA6\x99", false, false);
    REQUIRE(ids.size() == 5);  // "▁" then 4 bytes
    StreamDecoder stream(tok, false);
    CHECK(stream.push(ids[0]) == " ");
    CHECK(stream.push(ids[1]).empty());
    CHECK(stream.push(ids[2]).empty());
    CHECK(stream.push(ids[3]).empty());
    CHECK(stream.push(ids[4]) == "\xF0\x9F\xA6\x99");
    // An interrupted sequence becomes U+FFFD when flushed.
    stream.reset();
    stream.push(ids[1]);
    stream.push(ids[2]);
    CHECK(stream.flush() == "\xEF\xBF\xBD");
    CHECK_THROWS_AS(stream.push(-5), ember::Error);
}

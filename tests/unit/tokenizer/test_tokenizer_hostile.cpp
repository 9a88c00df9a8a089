// Small vocabularies built in memory: valid ones work, broken ones throw ember::Error.
#include <catch2/catch.hpp>

#include <functional>

#include "ember/error.hpp"
#include "gguf/gguf_writer.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "tokenizer_test_util.hpp"

using ember::Token;
using ember::gguf::MetaValue;
using ember::gguf::ValueType;
using ember::gguf::Writer;
using ember::tokenizer::Tokenizer;

namespace {

// SPM: <unk>, <s>, </s>, 256 byte tokens, then a few pieces.
Writer spm_writer() {
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<std::int32_t> types = {2, 3, 3};
    char buf[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        tokens.emplace_back(buf);
        types.push_back(6);
    }
    for (const char* p : {"\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab", "\xE2\x96\x81" "ab"}) {
        tokens.emplace_back(p);
        types.push_back(1);
    }
    std::vector<float> scores(tokens.size(), 0.0f);
    for (std::size_t i = 259; i < tokens.size(); ++i) scores[i] = -static_cast<float>(i - 259);
    scores.back() = 10.0f;  // "▁ab" merges first
    Writer w;
    w.set_string("tokenizer.ggml.model", "llama");
    w.set("tokenizer.ggml.tokens", MetaValue::strings(tokens));
    w.set("tokenizer.ggml.scores", MetaValue::f32s(scores));
    w.set("tokenizer.ggml.token_type", MetaValue::i32s(types));
    w.set_u32("tokenizer.ggml.bos_token_id", 1);
    w.set_u32("tokenizer.ggml.eos_token_id", 2);
    w.set_u32("tokenizer.ggml.unknown_token_id", 0);
    return w;
}

// BPE: the 256 byte characters, merges "a b" -> "ab", "Ġ ab" -> "Ġab", and an EOS token.
Writer bpe_writer() {
    const auto& b2u = ember::tokenizer::byte_to_unicode();
    std::vector<std::string> tokens(b2u.begin(), b2u.end());
    tokens.emplace_back("ab");
    tokens.emplace_back("\xC4\xA0" "ab");
    tokens.emplace_back("<|endoftext|>");
    std::vector<std::int32_t> types(tokens.size(), 1);
    types.back() = 3;
    Writer w;
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set_string("tokenizer.ggml.pre", "gpt-2");
    w.set("tokenizer.ggml.tokens", MetaValue::strings(tokens));
    w.set("tokenizer.ggml.token_type", MetaValue::i32s(types));
    w.set("tokenizer.ggml.merges", MetaValue::strings({"a b", "\xC4\xA0 ab"}));
    w.set_u32("tokenizer.ggml.eos_token_id", static_cast<std::uint32_t>(tokens.size() - 1));
    return w;
}

std::unique_ptr<Tokenizer> load(const Writer& w) {
    const auto bytes = w.write_to_bytes();
    const auto file = ember::gguf::File::from_copy(bytes.data(), bytes.size(), "hostile.gguf");
    return Tokenizer::from_gguf(file);
}

void expect_error(const Writer& w, const std::string& fragment) {
    try {
        load(w);
        FAIL("no ember::Error; expected one mentioning '" << fragment << "'");
    } catch (const ember::Error& e) {
        INFO(e.what());
        CHECK(std::string(e.what()).find(fragment) != std::string::npos);
        CHECK(std::string(e.what()).find("hostile.gguf") != std::string::npos);
    }
}

}  // namespace

TEST_CASE("small valid vocabularies work", "[tokenizer][hostile]") {
    const auto spm = load(spm_writer());
    const Token ab = spm->find_token("\xE2\x96\x81" "ab");
    CHECK(spm->encode("ab", true, false) == std::vector<Token>{1, ab});
    CHECK(spm->decode(spm->encode("ab z\n", false, false)) == "ab z\n");  // bytes for z, \n

    const auto bpe = load(bpe_writer());
    const Token ab2 = bpe->find_token("ab"), sab = bpe->find_token("\xC4\xA0" "ab");
    CHECK(bpe->encode("ab ab", false, false) == std::vector<Token>{ab2, sab});
    CHECK(bpe->decode(bpe->encode("x ab\n", false, false)) == "x ab\n");
    CHECK(bpe->is_end_of_generation(bpe->eos()));
    CHECK(bpe->bos() == -1);
}

TEST_CASE("unknown pre-tokenizer falls back to the GPT-2 regex", "[tokenizer][hostile]") {
    Writer w = bpe_writer();
    w.set_string("tokenizer.ggml.pre", "no-such-pre-tokenizer");
    const auto bpe = load(w);  // warns on stderr once
    CHECK(bpe->encode("ab ab", false, false) == load(bpe_writer())->encode("ab ab", false, false));
}

TEST_CASE("hostile vocabularies throw ember::Error", "[tokenizer][hostile]") {
    SECTION("empty piece") {
        Writer w = spm_writer();
        std::vector<std::string> t = {"<unk>", "", "</s>"};
        w.set("tokenizer.ggml.tokens", MetaValue::strings(t));
        w.set("tokenizer.ggml.scores", MetaValue::f32s(std::vector<float>(3, 0.0f)));
        w.set("tokenizer.ggml.token_type", MetaValue::i32s(std::vector<std::int32_t>{2, 3, 3}));
        expect_error(w, "is empty");
    }
    SECTION("huge piece") {
        Writer w = bpe_writer();
        const auto& b2u = ember::tokenizer::byte_to_unicode();
        std::vector<std::string> t(b2u.begin(), b2u.end());
        t.push_back(std::string(100000, 'x'));
        w.set("tokenizer.ggml.tokens", MetaValue::strings(t));
        w.set("tokenizer.ggml.token_type", MetaValue::i32s(std::vector<std::int32_t>(t.size(), 1)));
        w.set("tokenizer.ggml.merges", MetaValue::strings({}));
        w.remove("tokenizer.ggml.eos_token_id");
        expect_error(w, "bytes long");
    }
    SECTION("merge naming an unknown token") {
        Writer w = bpe_writer();
        w.set("tokenizer.ggml.merges", MetaValue::strings({"a b", "q zzz"}));
        expect_error(w, "not in the vocabulary");
    }
    SECTION("merge producing an unknown token") {
        Writer w = bpe_writer();
        w.set("tokenizer.ggml.merges", MetaValue::strings({"c d"}));
        expect_error(w, "produces a token");
    }
    SECTION("merge without a space") {
        Writer w = bpe_writer();
        w.set("tokenizer.ggml.merges", MetaValue::strings({"ab"}));
        expect_error(w, "merge 0");
    }
    SECTION("out-of-range special ids") {
        for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id",
                                "tokenizer.ggml.eot_token_id"}) {
            Writer w = spm_writer();
            w.set_u32(key, 100000);
            expect_error(w, key);
            w.set_i32(key, -7);
            expect_error(w, key);
        }
    }
    SECTION("mismatched array lengths") {
        Writer w = spm_writer();
        w.set("tokenizer.ggml.scores", MetaValue::f32s(std::vector<float>(10, 0.0f)));
        expect_error(w, "tokenizer.ggml.scores");
        Writer w2 = spm_writer();
        w2.set("tokenizer.ggml.token_type", MetaValue::i32s(std::vector<std::int32_t>(1000, 1)));
        expect_error(w2, "tokenizer.ggml.token_type");
    }
    SECTION("wrong array element types") {
        Writer w = spm_writer();
        w.set("tokenizer.ggml.tokens", MetaValue::i32s(std::vector<std::int32_t>(265, 1)));
        expect_error(w, "tokenizer.ggml.tokens");
        Writer w2 = spm_writer();
        w2.set("tokenizer.ggml.token_type", MetaValue::strings(std::vector<std::string>(265, "1")));
        expect_error(w2, "tokenizer.ggml.token_type");
        Writer w3 = spm_writer();
        w3.set("tokenizer.ggml.scores", MetaValue::strings(std::vector<std::string>(265, "0")));
        expect_error(w3, "tokenizer.ggml.scores");
        Writer w4 = bpe_writer();
        w4.set("tokenizer.ggml.merges", MetaValue::i32s(std::vector<std::int32_t>{1, 2}));
        expect_error(w4, "tokenizer.ggml.merges");
        Writer w5 = spm_writer();
        w5.set_string("tokenizer.ggml.tokens", "not an array");
        expect_error(w5, "tokenizer.ggml.tokens");
        Writer w6 = spm_writer();
        w6.set_u32("tokenizer.ggml.model", 5);
        expect_error(w6, "tokenizer.ggml.model");
        Writer w7 = spm_writer();
        w7.set_string("tokenizer.ggml.bos_token_id", "1");
        expect_error(w7, "tokenizer.ggml.bos_token_id");
    }
    SECTION("bad token types and byte tokens") {
        Writer w = spm_writer();
        std::vector<std::int32_t> types(265, 1);
        types[0] = 2;
        types[100] = 9;
        w.set("tokenizer.ggml.token_type", MetaValue::i32s(types));
        expect_error(w, "type 9");
        Writer w2 = spm_writer();
        std::vector<std::int32_t> types2(265, 1);
        types2[0] = 2;
        types2[260] = 6;  // "a" claims to be a byte token
        w2.set("tokenizer.ggml.token_type", MetaValue::i32s(types2));
        expect_error(w2, "<0xXX>");
    }
    SECTION("duplicate tokens") {
        Writer w = bpe_writer();
        const auto& b2u = ember::tokenizer::byte_to_unicode();
        std::vector<std::string> t(b2u.begin(), b2u.end());
        t.push_back("a");
        w.set("tokenizer.ggml.tokens", MetaValue::strings(t));
        w.set("tokenizer.ggml.token_type", MetaValue::i32s(std::vector<std::int32_t>(t.size(), 1)));
        w.set("tokenizer.ggml.merges", MetaValue::strings({}));
        w.remove("tokenizer.ggml.eos_token_id");
        expect_error(w, "duplicate token");
    }
    SECTION("missing keys and unsupported models") {
        Writer w = spm_writer();
        w.remove("tokenizer.ggml.tokens");
        expect_error(w, "tokenizer.ggml.tokens");
        Writer w2 = bpe_writer();
        w2.remove("tokenizer.ggml.merges");
        expect_error(w2, "tokenizer.ggml.merges");
        Writer w3 = spm_writer();
        w3.set_string("tokenizer.ggml.model", "bert");
        expect_error(w3, "not supported");
        Writer w4 = spm_writer();
        w4.remove("tokenizer.ggml.model");
        expect_error(w4, "tokenizer.ggml.model");
        Writer w5 = spm_writer();
        w5.set("tokenizer.ggml.tokens", MetaValue::strings({}));
        w5.remove("tokenizer.ggml.scores");
        w5.remove("tokenizer.ggml.token_type");
        expect_error(w5, "empty");
    }
    SECTION("add_bos without a BOS id") {
        Writer w = bpe_writer();
        w.set_bool("tokenizer.ggml.add_bos_token", true);
        expect_error(w, "add_bos_token");
    }
}

TEST_CASE("random corruption of a vocabulary never crashes", "[tokenizer][hostile]") {
    const auto good = spm_writer().write_to_bytes();
    std::mt19937 rng(5);
    int errors = 0, loaded = 0;
    for (int i = 0; i < 300; ++i) {
        auto bytes = good;
        for (int k = 0; k < 4; ++k) bytes[rng() % bytes.size()] = static_cast<std::uint8_t>(rng());
        INFO("mutant " << i);
        try {
            const auto file = ember::gguf::File::from_copy(bytes.data(), bytes.size(), "fuzz.gguf");
            const auto tok = Tokenizer::from_gguf(file);
            const auto ids = tok->encode("hello ab", true, true);
            // A vocabulary that loads only ever yields its own ids.
            for (Token id : ids) CHECK((id >= 0 && id < tok->n_vocab()));
            (void)tok->decode(ids);
            ++loaded;
        } catch (const ember::Error& e) {
            // Every rejection names the file it came from.
            CHECK_THAT(e.what(), Catch::Contains("fuzz.gguf"));
            ++errors;
        }
    }
    // Both outcomes occur: value corruptions that stay valid, and structural ones.
    CHECK(errors > 0);
    CHECK(loaded > 0);
}

// Hand-made invalid GGUF files: each must fail with an ember::Error whose message names the
// file, the key or tensor at fault, and a byte offset. Plus truncation at every byte, value
// conversions and a large-vocabulary timing check.
#include <catch2/catch.hpp>

#include <chrono>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

#include "ember/error.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "gguf_bytes.hpp"

using ember::gguf::File;
using gguf_test::Bytes;

namespace {

constexpr std::uint32_t kU8 = 0, kI8 = 1, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9,
                        kU64 = 10, kI64 = 11;
constexpr std::uint32_t kTF32 = 0, kTQ4_0 = 2;

// A file with `body` (metadata entries and tensor infos) followed by padding and `data_bytes`.
template <class Body>
Bytes make(std::uint64_t n_tensors, std::uint64_t n_kv, Body&& body, std::size_t data_bytes = 0,
           std::uint32_t version = 3, std::size_t align = 32) {
    Bytes b;
    b.header(n_tensors, n_kv, version);
    body(b);
    b.pad_to(align);
    b.zeros(data_bytes);
    return b;
}

// A small valid file that exercises every structure: scalars, strings, arrays, nested arrays,
// alignment, and two tensors.
Bytes small_valid_file(std::uint32_t version = 3) {
    return make(
        2, 6,
        [](Bytes& b) {
            b.key("general.name", kString).str("tiny");
            b.key("general.alignment", kU32).u32(32);
            b.key("k.u32", kU32).u32(7);
            b.key("k.strs", kArray).u32(kString).u64(2).str("ab").str("");
            b.key("k.nested", kArray).u32(kArray).u64(2).u32(kF32).u64(1).f32(0.5f).u32(kU8).u64(0);
            b.key("k.bool", kBool).u8(1);
            b.tensor("t0", {4}, kTF32, 0);
            b.tensor("t1", {32, 2}, kTQ4_0, 32);
        },
        32 + 36, version);
}

struct BadCase {
    std::string label;
    Bytes bytes;
    std::vector<std::string> needles;  // besides the file name and "byte"
};

std::vector<BadCase> bad_cases() {
    std::vector<BadCase> c;
    auto one_kv = [](auto&& f) { return make(0, 1, f); };
    auto one_tensor = [](auto&& f, std::size_t data = 64) { return make(1, 0, f, data); };

    c.push_back({"wrong magic", Bytes{}.raw("GGML").u32(3).u64(0).u64(0), {"magic", "byte 0"}});
    c.push_back({"version 1", make(0, 0, [](Bytes&) {}, 0, 1), {"version 1", "byte 4"}});
    c.push_back({"version 4", make(0, 0, [](Bytes&) {}, 0, 4), {"version 4", "byte 4"}});
    c.push_back({"big-endian version", make(0, 0, [](Bytes&) {}, 0, 3u << 24), {"big-endian", "byte 4"}});
    c.push_back({"huge n_kv", make(0, 1ull << 60, [](Bytes& b) { b.zeros(64); }), {"metadata count", "byte 16"}});
    c.push_back({"huge n_tensors", make(1ull << 60, 0, [](Bytes& b) { b.zeros(64); }), {"tensor count", "byte 8"}});
    c.push_back({"n_tensors too large after metadata",
                 make(3, 1, [](Bytes& b) { b.key("k.s", kString).str(std::string(80, 'x')); }),
                 {"tensor count", "byte 8"}});
    c.push_back({"key length past the end", make(0, 1, [](Bytes& b) { b.u64(1000).raw("abcdefghijklm"); }),
                 {"metadata entry 0", "key length 1000", "byte 24"}});
    c.push_back({"string value past the end",
                 one_kv([](Bytes& b) { b.key("k.s", kString).u64(1ull << 40).raw("xyz"); }),
                 {"'k.s'", "string length", "byte 39"}});
    c.push_back({"array length huge",
                 one_kv([](Bytes& b) { b.key("k.arr", kArray).u32(kU32).u64(1ull << 62).u32(1); }),
                 {"'k.arr'", "array length", "byte 45"}});
    c.push_back({"string array length huge",
                 one_kv([](Bytes& b) { b.key("k.arr", kArray).u32(kString).u64(1000000).str("a"); }),
                 {"'k.arr'", "array length 1000000", "byte 45"}});
    c.push_back({"nested arrays too deep", one_kv([](Bytes& b) {
                     b.key("k.deep", kArray);
                     for (int i = 0; i < 4; ++i) b.u32(kArray).u64(1);
                     b.u32(kU8).u64(0);
                 }),
                 {"'k.deep'", "nested deeper"}});
    c.push_back({"unknown value type", one_kv([](Bytes& b) { b.key("k.x", 13).u32(0); }),
                 {"'k.x'", "unknown value type 13", "byte 35"}});
    c.push_back({"unknown array element type", one_kv([](Bytes& b) { b.key("k.a", kArray).u32(99).u64(0); }),
                 {"'k.a'", "element type 99"}});
    c.push_back({"bool value 2", one_kv([](Bytes& b) { b.key("k.b", kBool).u8(2); }), {"'k.b'", "bool"}});
    c.push_back({"duplicate empty key", make(0, 2, [](Bytes& b) {
                     b.key("", kU32).u32(1);
                     b.key("", kU32).u32(1);
                 }),
                 {"key ''", "duplicate key"}});
    c.push_back({"duplicate key", make(0, 2, [](Bytes& b) {
                     b.key("k.d", kU32).u32(1);
                     b.key("k.d", kU32).u32(2);
                 }),
                 {"'k.d'", "duplicate key", "byte 43", "byte 24"}});
    c.push_back({"alignment 0", one_kv([](Bytes& b) { b.key("general.alignment", kU32).u32(0); }),
                 {"'general.alignment'", "power of two"}});
    c.push_back({"alignment 3", one_kv([](Bytes& b) { b.key("general.alignment", kU32).u32(3); }),
                 {"'general.alignment'", "alignment 3", "power of two"}});
    c.push_back({"alignment as u64", one_kv([](Bytes& b) { b.key("general.alignment", kU64).u64(32); }),
                 {"'general.alignment'", "u32"}});
    c.push_back({"alignment as i32", one_kv([](Bytes& b) { b.key("general.alignment", kI32).i32(32); }),
                 {"'general.alignment'", "u32"}});
    c.push_back({"tensor name past the end", one_tensor([](Bytes& b) { b.u64(1ull << 50).raw("t"); }, 0),
                 {"tensor info 0", "tensor name length"}});
    c.push_back({"empty tensor name", one_tensor([](Bytes& b) { b.tensor("", {4}, kTF32, 0); }),
                 {"empty tensor name", "byte 24"}});
    c.push_back({"unknown tensor type", one_tensor([](Bytes& b) { b.tensor("t.bad", {32}, 5, 0); }),
                 {"'t.bad'", "unknown tensor type 5", "byte 49"}});
    c.push_back({"tensor type 1000", one_tensor([](Bytes& b) { b.tensor("t.bad", {32}, 1000, 0); }),
                 {"'t.bad'", "unknown tensor type 1000"}});
    c.push_back({"n_dims 0", one_tensor([](Bytes& b) { b.str("t.nd").u32(0).u32(kTF32).u64(0).zeros(8); }),
                 {"'t.nd'", "n_dims 0", "byte 36"}});
    c.push_back({"n_dims 5", one_tensor([](Bytes& b) { b.tensor("t.nd", {1, 1, 1, 1, 1}, kTF32, 0); }),
                 {"'t.nd'", "n_dims 5"}});
    c.push_back({"zero dim", one_tensor([](Bytes& b) { b.tensor("t.z", {4, 0}, kTF32, 0); }),
                 {"'t.z'", "dimension 1 is 0", "byte 47"}});
    c.push_back({"dim above INT64_MAX", one_tensor([](Bytes& b) { b.tensor("t.z", {1ull << 63}, kTF32, 0); }),
                 {"'t.z'", "too large"}});
    c.push_back({"element count overflow",
                 one_tensor([](Bytes& b) { b.tensor("t.ov", {1ull << 32, 1ull << 32}, kTF32, 0); }),
                 {"'t.ov'", "element count overflows"}});
    c.push_back({"byte size overflow",
                 one_tensor([](Bytes& b) { b.tensor("t.bo", {1ull << 31, 1ull << 31}, kTF32, 0); }),
                 {"'t.bo'", "byte size overflows"}});
    c.push_back({"ne[0] not a multiple of the block size",
                 one_tensor([](Bytes& b) { b.tensor("t.q", {48}, kTQ4_0, 0); }), {"'t.q'", "block size 32"}});
    c.push_back({"misaligned offset", one_tensor([](Bytes& b) { b.tensor("t.m", {4}, kTF32, 4); }),
                 {"'t.m'", "not a multiple of the alignment 32"}});
    c.push_back({"offset past the end", one_tensor([](Bytes& b) { b.tensor("t.p", {4}, kTF32, 64); }, 32),
                 {"'t.p'", "past the end of the data section"}});
    c.push_back({"data runs past the end", one_tensor([](Bytes& b) { b.tensor("t.p", {16}, kTF32, 0); }, 32),
                 {"'t.p'", "past the end of the data section (32 bytes"}});
    c.push_back({"offset near 2^64",
                 one_tensor([](Bytes& b) { b.tensor("t.h", {4}, kTF32, 0xffffffffffffffe0ull); }),
                 {"'t.h'", "past the end of the data section"}});
    c.push_back({"overlapping tensors", make(2, 0, [](Bytes& b) {
                     b.tensor("t.a", {16}, kTF32, 0);
                     b.tensor("t.b", {4}, kTF32, 32);
                 }, 64),
                 {"'t.a'", "'t.b'", "overlaps"}});
    c.push_back({"duplicate tensor names", make(2, 0, [](Bytes& b) {
                     b.tensor("t.dup", {4}, kTF32, 0);
                     b.tensor("t.dup", {4}, kTF32, 32);
                 }, 64),
                 {"'t.dup'", "duplicate tensor name"}});
    {
        Bytes b;
        b.header(1, 0).tensor("t.nodata", {4}, kTF32, 0);  // no padding, no data section
        c.push_back({"data section past the end", b, {"data section", "past the end"}});
    }
    return c;
}

}  // namespace

TEST_CASE("small hand-made file is valid (v3 and v2)", "[gguf][bad]") {
    for (std::uint32_t version : {3u, 2u}) {
        const Bytes b = small_valid_file(version);
        const File f = File::from_copy(b.b.data(), b.size(), "tiny.gguf");
        CHECK(f.version() == version);
        CHECK(f.get_string("general.name") == "tiny");
        CHECK(f.get_array("k.strs").items.size() == 2);
        CHECK(f.get_array("k.nested").items[0].as_array("").items[0].as_f32("") == 0.5f);
        CHECK(f.tensors().size() == 2);
        CHECK(f.find_tensor("t1")->n_bytes == 36);
        CHECK(f.find_tensor("t1")->data == f.bytes().data() + f.data_offset() + 32);
    }
    // Like llama.cpp, an empty key is accepted (only empty tensor names are rejected).
    const Bytes empty_key = make(0, 1, [](Bytes& b) { b.key("", kU32).u32(1); });
    CHECK(File::from_copy(empty_key.b.data(), empty_key.size(), "k.gguf").get_u32("") == 1);
    // Four levels of arrays are accepted (the fifth is rejected, see the table).
    const Bytes deep = make(0, 1, [](Bytes& b) {
        b.key("k.deep", kArray);
        for (int i = 0; i < 3; ++i) b.u32(kArray).u64(1);
        b.u32(kU8).u64(1).u8(9);
    });
    const File f = File::from_copy(deep.b.data(), deep.size(), "deep.gguf");
    CHECK(f.get_array("k.deep").items[0].as_array("").items[0].as_array("").items[0].as_array("").items[0].as_u32(
              "") == 9);
}

TEST_CASE("hand-made bad files fail with messages naming file, key/tensor and byte", "[gguf][bad]") {
    for (const BadCase& c : bad_cases()) {
        INFO("case: " << c.label);
        std::string message;
        try {
            File::from_copy(c.bytes.b.data(), c.bytes.size(), "bad.gguf");
            FAIL("accepted an invalid file");
        } catch (const ember::Error& e) {
            message = e.what();
        }
        INFO("message: " << message);
        CHECK(message.rfind("bad.gguf: ", 0) == 0);
        CHECK(message.find("byte") != std::string::npos);
        for (const auto& needle : c.needles) {
            INFO("needle: " << needle);
            CHECK(message.find(needle) != std::string::npos);
        }
    }
}

TEST_CASE("every truncation of a small valid file throws ember::Error", "[gguf][bad]") {
    const Bytes b = small_valid_file();
    REQUIRE_NOTHROW(File::from_copy(b.b.data(), b.size(), "tiny.gguf"));
    for (std::size_t n = 0; n < b.size(); ++n) {
        INFO("prefix of " << n << " bytes");
        CHECK_THROWS_AS(File::from_copy(b.b.data(), n, "tiny.gguf"), ember::Error);
    }
    // Also through from_memory over an exactly sized buffer (ASan sees any overread).
    for (std::size_t n = 0; n < b.size(); ++n) {
        const std::vector<std::uint8_t> prefix(b.b.begin(), b.b.begin() + static_cast<std::ptrdiff_t>(n));
        CHECK_THROWS_WITH(File::from_memory(prefix.data(), prefix.size(), "tiny.gguf"),
                          Catch::StartsWith("tiny.gguf: ") && Catch::Contains("byte"));
    }
}

TEST_CASE("typed getters convert integers that fit and reject the rest", "[gguf][values]") {
    const Bytes b = make(0, 10, [](Bytes& x) {
        x.key("neg.i32", kI32).i32(-1);
        x.key("pos.i32", kI32).i32(5);
        x.key("small.u64", kU64).u64(5);
        x.key("big.u64", kU64).u64(1ull << 40);
        x.key("neg.i8", kI8).u8(0xfd);
        x.key("u8", kU8).u8(200);
        x.key("str", kString).str("12");
        x.key("f32", kF32).f32(2.5f);
        x.key("bool", kBool).u8(0);
        x.key("big.i64", kI64).u64(1ull << 62);
    });
    const File f = File::from_copy(b.b.data(), b.size(), "values.gguf");
    CHECK(f.get_u32("pos.i32") == 5);
    CHECK(f.get_u32("small.u64") == 5);
    CHECK(f.get_u32("u8") == 200);
    CHECK(f.find("neg.i8")->as_i64("neg.i8") == -3);
    CHECK(f.find("big.u64")->as_u64("big.u64") == (1ull << 40));
    CHECK(f.find("big.i64")->as_u64("big.i64") == (1ull << 62));
    CHECK(f.find("neg.i32")->as_i64("neg.i32") == -1);
    CHECK(f.get_f32("f32") == 2.5f);
    CHECK(f.get_f32("neg.i32") == -1.0f);
    CHECK_FALSE(f.get_bool_or("bool", true));
    CHECK(f.find("pos.i32")->is_integer());
    CHECK(f.find("f32")->is_float());
    CHECK_FALSE(f.find("str")->is_integer());

    CHECK_THROWS_WITH(f.get_u32("neg.i32"), Catch::StartsWith("values.gguf: ") && Catch::Contains("'neg.i32'") &&
                                                Catch::Contains("-1") && Catch::Contains("byte"));
    CHECK_THROWS_WITH(f.get_u32("big.u64"), Catch::Contains("'big.u64'") && Catch::Contains("does not fit"));
    CHECK_THROWS_WITH(f.get_u32("str"), Catch::Contains("'str'") && Catch::Contains("string"));
    CHECK_THROWS_WITH(f.get_u32("f32"), Catch::Contains("'f32'"));
    CHECK_THROWS_WITH(f.get_string("u8"), Catch::Contains("'u8'"));
    CHECK_THROWS_WITH(f.get_f32("str"), Catch::Contains("'str'"));
    CHECK_THROWS_WITH(f.get_array("str"), Catch::Contains("'str'"));
    CHECK_THROWS_WITH(f.get_u32("absent"), Catch::StartsWith("values.gguf: ") && Catch::Contains("'absent'"));
    CHECK_THROWS_AS(f.get_bool_or("u8", false), ember::Error);
    CHECK_THROWS_AS(f.get_string_or("u8", ""), ember::Error);
    CHECK_THROWS_AS(f.get_f32_or("str", 0.0f), ember::Error);
    CHECK_THROWS_AS(f.find("neg.i8")->as_u64("neg.i8"), ember::Error);
    CHECK_THROWS_AS(f.find("big.u64")->as_bool("big.u64"), ember::Error);
    ember::gguf::Value huge;
    huge.type = ember::gguf::ValueType::f64;
    huge.data = 1e300;
    CHECK_THROWS_WITH(huge.as_f32("k.huge"), Catch::Contains("'k.huge'") && Catch::Contains("f32"));
    huge.data = -std::numeric_limits<double>::infinity();
    CHECK(huge.as_f32("k.inf") == -std::numeric_limits<float>::infinity());
}

TEST_CASE("a 150k-token vocabulary parses quickly", "[gguf][perf]") {
    constexpr int kTokens = 150000;
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<std::int32_t> types;
    for (int i = 0; i < kTokens; ++i) {
        tokens.push_back("tok_" + std::to_string(i * 7919));
        scores.push_back(-static_cast<float>(i));
        types.push_back(1);
    }
    ember::gguf::Writer w;
    w.set_string("tokenizer.ggml.model", "gpt2");
    w.set("tokenizer.ggml.tokens", ember::gguf::MetaValue::strings(tokens));
    w.set("tokenizer.ggml.scores", ember::gguf::MetaValue::f32s(scores));
    w.set("tokenizer.ggml.token_type", ember::gguf::MetaValue::i32s(types));
    const auto bytes = w.write_to_bytes();

    // Thread CPU time, so that other processes on a busy machine do not count.
    auto cpu_ms = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
    };
    double best_ms = 1e9;
    double best_wall_ms = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
        const auto w0 = std::chrono::steady_clock::now();
        const double t0 = cpu_ms();
        const File f = File::from_memory(bytes.data(), bytes.size(), "vocab.gguf");
        const double t1 = cpu_ms();
        const auto w1 = std::chrono::steady_clock::now();
        best_ms = std::min(best_ms, t1 - t0);
        best_wall_ms = std::min(best_wall_ms, std::chrono::duration<double, std::milli>(w1 - w0).count());
        const auto& items = f.get_array("tokenizer.ggml.tokens").items;
        REQUIRE(items.size() == kTokens);
        CHECK(items[kTokens - 1].as_string("") == tokens.back());
    }
    WARN("150k-token vocabulary (3 arrays of 150k) parsed in " << best_ms << " ms CPU (" << best_wall_ms
                                                                   << " ms wall)");
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
    CHECK(best_ms < 100.0);
#else
    CHECK(best_ms < 2000.0);
#endif
}

// gguf::Writer: every value type, nested arrays, tensors, alignment, v2, and a byte-exact
// rewrite of a llama.cpp-produced file.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "ember/error.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "support/shared_data.hpp"

using ember::TensorType;
using ember::gguf::File;
using ember::gguf::MetaValue;
using ember::gguf::ValueType;
using ember::gguf::Writer;

namespace {

std::vector<std::uint8_t> iota_bytes(std::size_t n, std::uint8_t seed) {
    std::vector<std::uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed + i * 7);
    return v;
}

Writer all_types_writer() {
    Writer w;
    w.set("t.u8", MetaValue::u8(200));
    w.set("t.i8", MetaValue::i8(-100));
    w.set("t.u16", MetaValue::u16(60000));
    w.set("t.i16", MetaValue::i16(-30000));
    w.set_u32("t.u32", 4000000000u);
    w.set_i32("t.i32", -2000000000);
    w.set_u64("t.u64", 0xfedcba9876543210ull);
    w.set("t.i64", MetaValue::i64(std::numeric_limits<std::int64_t>::min()));
    w.set_f32("t.f32", 1.5f);
    w.set("t.f64", MetaValue::f64(-2.25e300));
    w.set_bool("t.bool", true);
    w.set_string("t.string", "h\xc3\xa9llo");
    w.set_string("t.empty", "");
    w.set("t.strings", MetaValue::strings({"a", "", "ccc"}));
    const std::vector<float> fs{0.5f, -1.0f, 3.25f};
    w.set("t.f32s", MetaValue::f32s(fs));
    const std::vector<std::int32_t> is{-1, 0, 7};
    w.set("t.i32s", MetaValue::i32s(is));
    w.set("t.empty_array", MetaValue::array(ValueType::u8, {}));
    // [[1, 2], [], [3]] of u16, and a three-level [[["x"]]].
    w.set("t.nested", MetaValue::array(ValueType::array,
                                       {MetaValue::array(ValueType::u16, {MetaValue::u16(1), MetaValue::u16(2)}),
                                        MetaValue::array(ValueType::u16, {}),
                                        MetaValue::array(ValueType::u16, {MetaValue::u16(3)})}));
    w.set("t.deep", MetaValue::array(ValueType::array,
                                     {MetaValue::array(ValueType::array,
                                                       {MetaValue::array(ValueType::string, {MetaValue::string("x")})})}));
    w.add_tensor("a", TensorType::F32, {3, 2}, iota_bytes(24, 1));
    w.add_tensor("b.q8", TensorType::Q8_0, {64}, iota_bytes(68, 2));
    w.add_tensor("c.f16", TensorType::F16, {5, 1, 1, 3}, iota_bytes(30, 3));
    return w;
}

}  // namespace

TEST_CASE("writer round trip keeps every value type, order and tensor", "[gguf][writer]") {
    const Writer w = all_types_writer();
    const auto bytes = w.write_to_bytes();
    const File f = File::from_memory(bytes.data(), bytes.size(), "roundtrip.gguf");
    CHECK(f.version() == 3);
    CHECK(f.alignment() == 32);
    CHECK(f.data_offset() % 32 == 0);
    CHECK(bytes.size() % 32 == 0);

    REQUIRE(f.metadata().size() == 19);
    CHECK(f.metadata()[0].key == "t.u8");
    CHECK(f.metadata()[18].key == "t.deep");
    CHECK(f.find("t.u8")->type == ValueType::u8);
    CHECK(f.get_u32("t.u8") == 200);
    CHECK(f.find("t.i8")->as_i64("t.i8") == -100);
    CHECK(f.get_u32("t.u16") == 60000);
    CHECK(f.find("t.i16")->as_i64("t.i16") == -30000);
    CHECK(f.get_u32("t.u32") == 4000000000u);
    CHECK(f.find("t.i32")->as_i64("t.i32") == -2000000000);
    CHECK(f.find("t.u64")->as_u64("t.u64") == 0xfedcba9876543210ull);
    CHECK(f.find("t.i64")->as_i64("t.i64") == std::numeric_limits<std::int64_t>::min());
    CHECK(f.get_f32("t.f32") == 1.5f);
    CHECK(std::get<double>(f.find("t.f64")->data) == -2.25e300);
    CHECK(f.get_bool_or("t.bool", false) == true);
    CHECK(f.get_string("t.string") == "h\xc3\xa9llo");
    CHECK(f.get_string("t.empty").empty());
    const auto& strs = f.get_array("t.strings");
    REQUIRE(strs.items.size() == 3);
    CHECK(strs.items[0].as_string("") == "a");
    CHECK(strs.items[1].as_string("").empty());
    CHECK(strs.items[2].as_string("") == "ccc");
    const auto& fa = f.get_array("t.f32s");
    CHECK(fa.element_type == ValueType::f32);
    REQUIRE(fa.items.size() == 3);
    CHECK(fa.items[2].as_f32("") == 3.25f);
    const auto& ia = f.get_array("t.i32s");
    REQUIRE(ia.items.size() == 3);
    CHECK(ia.items[0].as_i64("") == -1);
    CHECK(f.get_array("t.empty_array").items.empty());
    CHECK(f.get_array("t.empty_array").element_type == ValueType::u8);
    const auto& nested = f.get_array("t.nested");
    CHECK(nested.element_type == ValueType::array);
    REQUIRE(nested.items.size() == 3);
    CHECK(nested.items[0].as_array("").items.size() == 2);
    CHECK(nested.items[0].as_array("").items[1].as_u32("") == 2);
    CHECK(nested.items[1].as_array("").items.empty());
    CHECK(nested.items[2].as_array("").element_type == ValueType::u16);
    const auto& deep = f.get_array("t.deep");
    CHECK(deep.items[0].as_array("").items[0].as_array("").items[0].as_string("") == "x");

    REQUIRE(f.tensors().size() == 3);
    const auto& a = f.tensors()[0];
    CHECK(a.name == "a");
    CHECK(a.n_dims == 2);
    CHECK(a.ne[0] == 3);
    CHECK(a.ne[1] == 2);
    CHECK(a.n_bytes == 24);
    CHECK(std::memcmp(a.data, iota_bytes(24, 1).data(), 24) == 0);
    const auto* q = f.find_tensor("b.q8");
    REQUIRE(q != nullptr);
    CHECK(q->type == TensorType::Q8_0);
    CHECK(q->offset % 32 == 0);
    CHECK(std::memcmp(q->data, iota_bytes(68, 2).data(), 68) == 0);
    const auto* c = f.find_tensor("c.f16");
    REQUIRE(c != nullptr);
    CHECK(c->n_dims == 4);
    CHECK(c->ne[3] == 3);
    CHECK(c->n_elements == 15);
    CHECK(std::memcmp(c->data, iota_bytes(30, 3).data(), 30) == 0);

    // copy_metadata reproduces the same header and values.
    Writer w2;
    w2.copy_metadata(f);
    for (const auto& t : f.tensors()) {
        w2.add_tensor_view(t.name, t.type, std::vector<std::int64_t>(t.ne, t.ne + t.n_dims), {t.data, t.n_bytes});
    }
    CHECK(w2.write_to_bytes() == bytes);
}

TEST_CASE("writer: set replaces in place, remove, alignment, version 2", "[gguf][writer]") {
    Writer w;
    w.set_u32("x", 1);
    w.set_string("y", "s");
    w.set_u32("x", 2);
    CHECK(w.n_metadata() == 2);
    CHECK(w.has("y"));
    CHECK(w.remove("y"));
    CHECK_FALSE(w.remove("y"));
    w.set_alignment(64);
    w.set_version(2);
    w.add_tensor("t", TensorType::I8, {3}, {1, 2, 3});
    w.add_tensor("u", TensorType::I32, {1}, {9, 0, 0, 0});
    const auto bytes = w.write_to_bytes();
    const File f = File::from_copy(bytes.data(), bytes.size(), "v2.gguf");
    CHECK(f.version() == 2);
    CHECK(f.alignment() == 64);
    CHECK(f.data_offset() % 64 == 0);
    CHECK(f.get_u32("x") == 2);
    CHECK(f.metadata()[0].key == "x");
    CHECK(f.find_tensor("u")->offset == 64);
    CHECK(f.find_tensor("u")->data[0] == 9);

    CHECK_THROWS_AS(w.set_alignment(0), ember::Error);
    CHECK_THROWS_AS(w.set_alignment(48), ember::Error);
    CHECK_THROWS_AS(w.set_version(1), ember::Error);
    CHECK_THROWS_AS(w.set_version(4), ember::Error);
}

TEST_CASE("writer rejects what the reader would reject", "[gguf][writer]") {
    Writer w;
    CHECK_THROWS_WITH(w.add_tensor("q", TensorType::Q4_0, {48}, std::vector<std::uint8_t>(27)),
                      Catch::Contains("'q'") && Catch::Contains("block size"));
    CHECK_THROWS_WITH(w.add_tensor("f", TensorType::F32, {4}, std::vector<std::uint8_t>(15)),
                      Catch::Contains("'f'") && Catch::Contains("needs 16"));
    CHECK_THROWS_AS(w.add_tensor("", TensorType::F32, {1}, std::vector<std::uint8_t>(4)), ember::Error);
    CHECK_THROWS_AS(w.add_tensor("z", TensorType::F32, {}, {}), ember::Error);
    CHECK_THROWS_AS(w.add_tensor("z", TensorType::F32, {1, 1, 1, 1, 1}, std::vector<std::uint8_t>(4)), ember::Error);
    CHECK_THROWS_AS(w.add_tensor("z", TensorType::F32, {0}, {}), ember::Error);
    CHECK_THROWS_AS(w.add_tensor("z", TensorType::F32, {1LL << 40, 1LL << 40}, {}), ember::Error);
    CHECK_THROWS_AS(w.add_tensor("z", static_cast<TensorType>(5), {1}, {}), ember::Error);
    w.add_tensor("ok", TensorType::F32, {1}, std::vector<std::uint8_t>(4));
    CHECK_THROWS_WITH(w.add_tensor("ok", TensorType::F32, {1}, std::vector<std::uint8_t>(4)),
                      Catch::Contains("duplicate"));
    CHECK_THROWS_AS(w.set_u32("", 1), ember::Error);
    CHECK_THROWS_AS(MetaValue::array(ValueType::u32, {MetaValue::u32(1), MetaValue::i32(2)}), ember::Error);
    const auto l1 = MetaValue::array(ValueType::u8, {});
    const auto l2 = MetaValue::array(ValueType::array, {l1});
    const auto l3 = MetaValue::array(ValueType::array, {l2});
    const auto l4 = MetaValue::array(ValueType::array, {l3});
    CHECK(l4.depth() == 4);
    CHECK_THROWS_AS(MetaValue::array(ValueType::array, {l4}), ember::Error);
    // A general.alignment of the wrong type fails at write time.
    w.set_u64("general.alignment", 32);
    CHECK_THROWS_WITH(w.write_to_bytes(), Catch::Contains("general.alignment"));
}

TEST_CASE("writer streams to a file that File::open maps", "[gguf][writer]") {
    const auto dir = std::filesystem::temp_directory_path() / "ember_test_gguf_writer";
    std::filesystem::create_directories(dir);
    const auto path = (dir / "w.gguf").string();
    const Writer w = all_types_writer();
    w.write_to_file(path);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
    const File f = File::open(path);
    CHECK(f.name() == path);
    CHECK(f.tensors().size() == 3);
    const auto bytes = w.write_to_bytes();
    CHECK(std::vector<std::uint8_t>(f.bytes().begin(), f.bytes().end()) == bytes);
    // A directory and an empty file are errors naming the path.
    CHECK_THROWS_WITH(File::open(dir.string()), Catch::Contains(dir.string()) && Catch::Contains("directory"));
    const auto empty = (dir / "empty.gguf").string();
    std::ofstream(empty).close();
    CHECK_THROWS_WITH(File::open(empty), Catch::Contains(empty) && Catch::Contains("empty"));
    CHECK_THROWS_WITH(File::open((dir / "missing.gguf").string()), Catch::Contains("missing.gguf"));
    CHECK_THROWS_WITH(File::open("/dev/null"), Catch::Contains("/dev/null") && Catch::Contains("not a regular file"));
    // Writing into a missing folder fails cleanly.
    CHECK_THROWS_AS(w.write_to_file((dir / "no/such/dir/x.gguf").string()), ember::Error);
    std::filesystem::remove_all(dir);
}

TEST_CASE("writer rewrites stories260K byte for byte", "[gguf][writer]") {
    for (const char* name : {"models/stories260K.gguf", "models/stories260K-Q4_0.gguf"}) {
        EMBER_REQUIRE_SHARED(name);
        const File f = File::open(ember_test::shared_file(name).string());
        Writer w;
        w.copy_metadata(f);
        for (const auto& t : f.tensors()) {
            w.add_tensor_view(t.name, t.type, std::vector<std::int64_t>(t.ne, t.ne + t.n_dims), {t.data, t.n_bytes});
        }
        const auto out = w.write_to_bytes();
        INFO(name);
        CHECK(out.size() == f.bytes().size());
        CHECK(std::equal(out.begin(), out.end(), f.bytes().begin(), f.bytes().end()));
    }
}

// The JSON value, parser and the Python-compatible serializer behind tojson.
#include <catch2/catch.hpp>

#include "chat/json.hpp"
#include "ember/error.hpp"

using ember::json::Value;

namespace {

std::string parse_error(const std::string& text) {
    try {
        ember::json::parse(text);
    } catch (const ember::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST_CASE("json: parse keeps types and object order", "[chat_template][json]") {
    Value v = ember::json::parse(R"( {"z": 1, "a": [true, false, null, -2.5e3, "x"], "m": {}, "big": 12345678901234567890} )");
    REQUIRE(v.is_object());
    REQUIRE(v.as_object().size() == 4);
    CHECK(v.as_object()[0].first == "z");
    CHECK(v.find("z")->is_int());
    CHECK(v.find("z")->as_int() == 1);
    const auto& a = v.find("a")->as_array();
    CHECK(a[0].as_bool());
    CHECK(a[2].is_null());
    CHECK(a[3].as_double() == -2500.0);
    CHECK(a[4].as_string() == "x");
    CHECK(v.find("big")->is_number());  // past int64: a double, as in any JSON reader without bigints
    CHECK(v.find("nope") == nullptr);
}

TEST_CASE("json: string escapes and UTF-8", "[chat_template][json]") {
    Value v = ember::json::parse(R"(["\u00e9\ud83d\ude00\n\t\"\\\/", "｜▁"])");
    CHECK(v.as_array()[0].as_string() == "é😀\n\t\"\\/");
    CHECK(v.as_array()[1].as_string() == "｜▁");
}

TEST_CASE("json: dump matches Python json.dumps(ensure_ascii=False)", "[chat_template][json]") {
    Value v = ember::json::parse(R"({"a": [1, 2.0, 0.1, 1e16, 1e-5, null, true], "b": "é\u0001\"", "c": {}, "d": []})");
    CHECK(ember::json::dump(v) ==
          R"({"a": [1, 2.0, 0.1, 1e+16, 1e-05, null, true], "b": "é\u0001\"", "c": {}, "d": []})");
    CHECK(ember::json::dump(v, 2) ==
          "{\n  \"a\": [\n    1,\n    2.0,\n    0.1,\n    1e+16,\n    1e-05,\n    null,\n    true\n  ],\n"
          "  \"b\": \"é\\u0001\\\"\",\n  \"c\": {},\n  \"d\": []\n}");
}

TEST_CASE("json: Python float repr", "[chat_template][json]") {
    using ember::json::python_float_repr;
    CHECK(python_float_repr(1.0) == "1.0");
    CHECK(python_float_repr(0.1 + 0.2) == "0.30000000000000004");
    CHECK(python_float_repr(123456789012345.0) == "123456789012345.0");
    CHECK(python_float_repr(1e16) == "1e+16");
    CHECK(python_float_repr(1.5e300) == "1.5e+300");
    CHECK(python_float_repr(0.0001) == "0.0001");
    CHECK(python_float_repr(0.00001) == "1e-05");
    CHECK(python_float_repr(-2.5e-7) == "-2.5e-07");
    CHECK(python_float_repr(-0.0) == "-0.0");
}

TEST_CASE("json: errors name line and column", "[chat_template][json]") {
    CHECK(parse_error("[1,\n 2,,]") == "JSON: line 2, column 4: unexpected character ','");
    CHECK(parse_error("{\"a\" 1}") == "JSON: line 1, column 6: expected ':'");
    CHECK(parse_error("\"abc") == "JSON: line 1, column 5: unterminated string");
    CHECK(parse_error("[1] x") == "JSON: line 1, column 5: unexpected text after the JSON value");
    CHECK(parse_error(std::string(1000, '[')) == "JSON: line 1, column 514: nesting deeper than 512 levels");
    CHECK(parse_error("01") == "JSON: line 1, column 2: unexpected text after the JSON value");
}

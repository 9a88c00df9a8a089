// JSON for the chat templates: nlohmann-json values, ember's parse errors and nesting bound,
// and the Python-compatible serializer behind tojson.
#include <catch2/catch.hpp>
#include <limits>

#include "chat/json.hpp"
#include "ember/error.hpp"

using ember::json::Value;

namespace {

std::string json_parse_error(const std::string& text) {
    try {
        (void)ember::json::parse(text);
    } catch (const ember::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST_CASE("json: parse keeps types and object order", "[chat_template][json]") {
    Value v = ember::json::parse(R"( {"z": 1, "a": [true, false, null, -2.5e3, "x"], "m": {}, "big": 12345678901234567890} )");
    REQUIRE(v.is_object());
    REQUIRE(v.size() == 4);
    CHECK(v.begin().key() == "z");
    CHECK(v.at("z").is_number_integer());
    CHECK(v.at("z").get<std::int64_t>() == 1);
    const Value& a = v.at("a");
    CHECK(a[0].get<bool>());
    CHECK(a[2].is_null());
    CHECK(a[3].get<double>() == -2500.0);
    CHECK(a[4].get<std::string>() == "x");
    CHECK(v.at("big").is_number_unsigned());
    CHECK(ember::json::dump(v.at("big")) == "12345678901234567890");  // exact, as Python
    CHECK_FALSE(v.contains("nope"));
    // A duplicate key keeps the last value in the first key's place (Python's json.loads).
    CHECK(ember::json::dump(ember::json::parse(R"({"a": 1, "b": 2, "a": 3})")) == R"({"a": 3, "b": 2})");
}

TEST_CASE("json: string escapes and UTF-8", "[chat_template][json]") {
    Value v = ember::json::parse(R"(["\u00e9\ud83d\ude00\n\t\"\\\/", "｜▁"])");
    CHECK(v[0].get<std::string>() == "é😀\n\t\"\\/");
    CHECK(v[1].get<std::string>() == "｜▁");
}

TEST_CASE("json: dump matches Python json.dumps(ensure_ascii=False)", "[chat_template][json]") {
    Value v = ember::json::parse(R"({"a": [1, 2.0, 0.1, 1e16, 1e-5, null, true], "b": "é\u0001\"", "c": {}, "d": []})");
    CHECK(ember::json::dump(v) ==
          R"({"a": [1, 2.0, 0.1, 1e+16, 1e-05, null, true], "b": "é\u0001\"", "c": {}, "d": []})");
    CHECK(ember::json::dump(v, 2) ==
          "{\n  \"a\": [\n    1,\n    2.0,\n    0.1,\n    1e+16,\n    1e-05,\n    null,\n    true\n  ],\n"
          "  \"b\": \"é\\u0001\\\"\",\n  \"c\": {},\n  \"d\": []\n}");
    CHECK(ember::json::dump(Value(std::numeric_limits<double>::infinity())) == "Infinity");
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
    CHECK_THAT(json_parse_error("[1,\n 2,,]"), Catch::StartsWith("JSON: line 2, column 4: syntax error"));
    CHECK_THAT(json_parse_error("{\"a\" 1}"), Catch::StartsWith("JSON: line 1, column 6: syntax error") &&
                                             Catch::Contains("expected ':'"));
    CHECK_THAT(json_parse_error("\"abc"), Catch::StartsWith("JSON: line 1, column 5:") && Catch::Contains("missing closing quote"));
    CHECK_THAT(json_parse_error("[1] x"), Catch::StartsWith("JSON: line 1, column 5:") && Catch::Contains("expected end of input"));
    CHECK_THAT(json_parse_error("\"\xFF\""), Catch::Contains("ill-formed UTF-8"));
    CHECK(json_parse_error(std::string(1000, '[')) == "JSON: nesting deeper than 512 levels");
    CHECK(json_parse_error(std::string(512, '[') + std::string(512, ']')) == "<no error>");
    CHECK_THAT(json_parse_error("01"), Catch::StartsWith("JSON: line 1, column 2:"));
    // Past double's range: nlohmann throws out_of_range, which parse turns into ember::Error.
    CHECK(json_parse_error("[1e400]") == "JSON: number overflow parsing '1e400'");
    CHECK(json_parse_error("{\"a\": -2e11111111}") == "JSON: number overflow parsing '-2e11111111'");
}

TEST_CASE("json: nesting depth and the end of a bracketed value skip strings", "[chat_template][json]") {
    using ember::json::bracket_end;
    using ember::json::nesting_depth;
    CHECK(nesting_depth(R"({"a": [1, {"b": "]}[{"}]})") == 3);
    CHECK(nesting_depth("") == 0);
    const std::string text = R"(x {"s": "}{\"]", "t": [1, {}]} tail)";
    CHECK(bracket_end(text, 2) == text.size() - 5);
    CHECK(bracket_end(text, 22) == text.size() - 6);  // the inner [1, {}]
    CHECK(bracket_end(R"({"open": [1, 2)", 0) == std::string::npos);
    CHECK(bracket_end(R"({"a": "}\)", 0) == std::string::npos);  // a backslash at the very end
    CHECK(bracket_end("", 0) == std::string::npos);
}

// JSON Schema -> grammar: for each schema, JSON texts its grammar must accept (checked valid
// by the test's own validator too) and texts it must reject; then the conversion errors.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ember/error.hpp"
#include "ember/grammar.hpp"
#include "grammar_test_util.hpp"
#include "schema_validator.hpp"

using grammar_test::Match;

namespace {

struct Case {
    const char* schema;
    std::vector<std::string> accepted;
    std::vector<std::string> rejected;
};

std::string conversion_error(const std::string& schema) {
    try {
        (void)ember::json_schema_to_grammar(schema);
    } catch (const ember::Error& e) {
        return e.what();
    }
    return "";
}

void check_case(const Case& c) {
    INFO("schema: " << c.schema);
    const std::string gbnf = ember::json_schema_to_grammar(c.schema);
    INFO("grammar:\n" << gbnf);
    const grammar_test::SchemaValidator validator(grammar_test::ojson::parse(c.schema));
    for (const std::string& text : c.accepted) {
        INFO("accepted text: " << text);
        auto m = grammar_test::byte_matcher(gbnf);
        CHECK(grammar_test::run(m, text) == Match::complete);
        CHECK(validator.validate(grammar_test::ojson::parse(text)) == "");
    }
    for (const std::string& text : c.rejected) {
        INFO("rejected text: " << text);
        auto m = grammar_test::byte_matcher(gbnf);
        CHECK(grammar_test::run(m, text) != Match::complete);
    }
}

}  // namespace

TEST_CASE("json schema: primitive types and unions", "[grammar][json_schema]") {
    check_case({R"({"type": "string"})", {R"("")", R"("a \"q\" \\ \n \u00e9 \/")", "\"\xC3\xA9\""},
                {R"("a)", "\"a\nb\"", R"("\x")", R"("\ud800")", "1"}});
    check_case({R"({"type": "integer"})", {"0", "-12", "1234567890123456"}, {"01", "1.5", "-", "12345678901234567"}});
    check_case({R"({"type": "number"})", {"0", "-1.25", "3e10", "2.5E-3"}, {".5", "1.", "+1", "0x1"}});
    check_case({R"({"type": "boolean"})", {"true", "false"}, {"True", "1"}});
    check_case({R"({"type": "null"})", {"null"}, {"nil"}});
    check_case({R"({"type": ["integer", "null"]})", {"3", "null"}, {"\"3\""}});
    check_case({R"({})", {"1", R"({"a": [1, "b", null]})", "[]"}, {"[1,]"}});
    check_case({R"(true)", {"\"x\""}, {}});
}

TEST_CASE("json schema: objects", "[grammar][json_schema]") {
    const char* schema = R"({"type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "nick": {"type": "string"}},
        "required": ["name", "age"]})";
    check_case({schema,
                {R"({"name": "a", "age": 3})", R"({"name":"a","age":3,"nick":"b"})",
                 "{\n  \"name\": \"a\",\n  \"age\": 3\n}"},
                {R"({"age": 3, "name": "a"})", R"({"name": "a"})", R"({"name": "a", "age": 3, "x": 1})",
                 R"({"name": "a", "age": "3"})"}});
    // additionalProperties: a schema, or true (keys other than the listed ones).
    check_case({R"({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "boolean"}})",
                {R"({"a": 1, "b": true, "c": false})", R"({})", R"({"ab": true})"},
                {R"({"b": 1})", R"({"a": true})"}});
    check_case({R"({"properties": {"k": {"const": 1}}, "additionalProperties": true, "required": ["k"]})",
                {R"({"k": 1, "x": [null]})", R"({"k": 1, "kk": 2})"}, {R"({"k": 1, "k": 2})", R"({"x": 1})"}});
    // Required names without a schema take any value; keys are quoted exactly.
    check_case({R"({"required": ["q\"uote", "b\\s"]})", {R"({"q\"uote": [1], "b\\s": null})"}, {R"({"q\"uote": 1})"}});
    // json_object mode.
    check_case({std::string(ember::kJsonObjectSchema).c_str(), {R"({"a": {"b": [1]}})", "{}"}, {"[]", "1"}});
}

TEST_CASE("json schema: arrays", "[grammar][json_schema]") {
    check_case({R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3})",
                {"[1, 2]", "[1,2,3]"}, {"[1]", "[1, 2, 3, 4]", "[1, \"2\"]"}});
    check_case({R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]})",
                {R"(["a", 1])"}, {R"([1, "a"])", R"(["a"])", R"(["a", 1, 2])"}});
    check_case({R"({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "boolean"}, "maxItems": 3})",
                {R"(["a"])", R"(["a", true, false])"}, {R"(["a", true, false, true])", R"(["a", 1])"}});
    check_case({R"({"type": "array", "items": false})", {"[]"}, {"[1]"}});
    check_case({R"({"type": "array", "minItems": 1})", {"[null]", R"([1, "x"])"}, {"[]"}});
}

TEST_CASE("json schema: enum, const, anyOf, oneOf, allOf, $ref", "[grammar][json_schema]") {
    check_case({R"({"enum": ["red", 1.5, null, {"a": [true]}]})", {R"("red")", "1.5", "null", R"({"a":[true]})"},
                {R"("blue")", "1.50", R"({"a": [true]})"}});
    check_case({R"({"const": "x\ny"})", {R"("x\ny")"}, {R"("x y")"}});
    check_case({R"({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]})", {"5", R"("ab")"}, {R"("abc")"}});
    check_case({R"({"oneOf": [{"type": "boolean"}, {"type": "null"}]})", {"true", "null"}, {"0"}});
    check_case({R"({"$defs": {"base": {"properties": {"id": {"type": "integer"}}, "required": ["id"]}},
                    "allOf": [{"$ref": "#/$defs/base"}, {"properties": {"tag": {"type": "string"}}}]})",
                {R"({"id": 1})", R"({"id": 1, "tag": "t"})"}, {R"({"tag": "t"})"}});
    // Recursive $ref through definitions, and one name used at two paths.
    const char* tree = R"({"$ref": "#/definitions/node", "definitions": {"node": {"type": "object",
        "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/definitions/node"}}},
        "required": ["v"]}}})";
    check_case({tree, {R"({"v": 1})", R"({"v": 1, "kids": [{"v": 2, "kids": []}, {"v": 3}]})"}, {R"({"v": 1, "kids": [{}]})"}});
    check_case({R"({"$defs": {"a": {"$defs": {"x": {"type": "integer"}}}, "b": {"$defs": {"x": {"type": "string"}}}},
                    "type": "array", "prefixItems": [{"$ref": "#/$defs/a/$defs/x"}, {"$ref": "#/$defs/b/$defs/x"}]})",
                {R"([1, "s"])"}, {R"(["s", 1])", R"([1, 1])"}});
}

TEST_CASE("json schema: string formats, lengths and patterns", "[grammar][json_schema]") {
    check_case({R"({"type": "string", "format": "date"})", {R"("2024-02-29")"}, {R"("2024-13-01")", R"("24-01-01")"}});
    check_case({R"({"type": "string", "format": "time"})", {R"("23:59:01Z")", R"("01:02:03.456+05:30")"}, {R"("24:00:00Z")"}});
    check_case({R"({"type": "string", "format": "date-time"})", {R"("2024-01-02T03:04:05Z")"}, {R"("2024-01-02 03:04:05Z")"}});
    check_case({R"({"type": "string", "format": "uuid"})", {R"("123e4567-e89b-12d3-a456-426614174000")"}, {R"("123e4567")"}});
    check_case({R"({"type": "string", "minLength": 2, "maxLength": 3})", {R"("ab")", "\"\xC3\xA9\xC3\xA9\"", R"("a\nb")"},
                {R"("a")", R"("abcd")"}});
    check_case({R"({"type": "string", "pattern": "^[a-z]{2,3}-\\d+$"})", {R"("ab-1")", R"("abc-123")"},
                {R"("a-1")", R"("ab-")", R"("AB-1")"}});
    check_case({R"({"type": "string", "pattern": "^(?:yes|no)(!|\\?)?$"})", {R"("yes")", R"("no?")"}, {R"("maybe")"}});
    // Unanchored patterns search; quotes and backslashes come out escaped.
    check_case({R"({"type": "string", "pattern": "a\"b"})", {R"("xa\"by")", R"("a\"b")"}, {R"("ab")"}});
    check_case({R"({"type": "string", "pattern": "^[^a]\\\\.$"})", {R"("b\\c")", R"("\"\\c")"}, {R"("a\\c")", R"("b\\")"}});
}

TEST_CASE("json schema: numeric ranges", "[grammar][json_schema]") {
    check_case({R"({"type": "integer", "minimum": 0, "maximum": 150})", {"0", "9", "10", "99", "150"}, {"-1", "151", "200", "1000"}});
    check_case({R"({"type": "integer", "minimum": -25, "maximum": 7})", {"-25", "-9", "0", "7"}, {"-26", "8", "-0"}});
    check_case({R"({"type": "integer", "exclusiveMinimum": 9, "exclusiveMaximum": 100})", {"10", "99"}, {"9", "100"}});
    check_case({R"({"type": "integer", "minimum": 1234})", {"1234", "1299", "9999", "10000"}, {"1233", "999", "0"}});
    check_case({R"({"type": "integer", "maximum": -10})", {"-10", "-11", "-1000"}, {"-9", "0", "5"}});
    check_case({R"({"type": "integer", "minimum": 0.5, "maximum": 2.5})", {"1", "2"}, {"0", "3"}});
    check_case({R"({"type": "number", "minimum": -1, "maximum": 2})", {"-1", "-0.5", "0", "1.999", "2", "2.000"},
                {"-1.5", "2.5", "2.001", "3"}});
    check_case({R"({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1})", {"0.5", "0.001"}, {"0", "1", "0.0", "1.0"}});
    check_case({R"({"type": "number", "minimum": 10})", {"10", "10.5", "123.25"}, {"9.99", "-10"}});
}

TEST_CASE("json schema: errors name what is wrong", "[grammar][json_schema]") {
    CHECK_THAT(conversion_error("{\"type\": "), Catch::Contains("invalid JSON"));
    CHECK_THAT(conversion_error(R"({"type": "strng"})"), Catch::Contains("unknown type \"strng\""));
    CHECK_THAT(conversion_error(R"({"$ref": "https://example.com/s.json"})"), Catch::Contains("only local references"));
    CHECK_THAT(conversion_error(R"({"$ref": "#/$defs/missing"})"), Catch::Contains("does not resolve"));
    CHECK_THAT(conversion_error(R"({"properties": {"a": false}, "required": ["a"]})"), Catch::Contains("#/properties/a"));
    CHECK_THAT(conversion_error(R"({"type": "string", "pattern": "^(a)\\1$"})"), Catch::Contains("backreferences"));
    CHECK_THAT(conversion_error(R"({"type": "string", "pattern": "^(?=a)b$"})"), Catch::Contains("lookaround"));
    CHECK_THAT(conversion_error(R"({"type": "string", "pattern": "\\bword"})"), Catch::Contains("word boundaries"));
    CHECK_THAT(conversion_error(R"({"type": "string", "pattern": "^a)$"})"), Catch::Contains("unbalanced"));
    CHECK_THAT(conversion_error(R"({"type": "string", "pattern": "[a"})"), Catch::Contains("unclosed '['"));
    CHECK_THAT(conversion_error(R"({"type": "number", "minimum": 0.5})"), Catch::Contains("only integer bounds"));
    CHECK_THAT(conversion_error(R"({"type": "integer", "minimum": 5, "maximum": 1})"), Catch::Contains("empty"));
    CHECK_THAT(conversion_error(R"({"type": "array", "maxItems": -1})"), Catch::Contains("non-negative integer"));
    // Counts past int64 (as floats or as unsigned integers) are refused before any conversion.
    CHECK_THAT(conversion_error(R"({"type": "string", "minLength": -2.5e116})"), Catch::Contains("non-negative integer"));
    CHECK_THAT(conversion_error(R"({"type": "string", "maxLength": 1e300})"), Catch::Contains("maxLength is out of range"));
    CHECK_THAT(conversion_error(R"({"type": "array", "minItems": 18446744073709551615})"), Catch::Contains("out of range"));
    CHECK_THAT(conversion_error(R"({"type": "array", "minItems": 1.5})"), Catch::Contains("non-negative integer"));
    CHECK(conversion_error(R"({"type": "array", "items": {"type": "integer"}, "maxItems": 2.0})").empty());
    // A number past double's range is a JSON error, not an escaping exception.
    CHECK_THAT(conversion_error(R"({"type": "integer", "minimum": 1e400})"), Catch::Contains("number overflow"));
    CHECK_THAT(conversion_error(R"({"allOf": [{"type": "string"}, {"minLength": 1}]})"), Catch::Contains("allOf"));
    CHECK_THAT(conversion_error(std::string(200, '[') + std::string(200, ']')), Catch::Contains("nested deeper"));
    std::string deep = "{\"type\": \"integer\"}";
    for (int i = 0; i < 200; ++i) deep = "{\"type\": \"array\", \"items\": " + deep + "}";
    CHECK_THAT(conversion_error(deep), Catch::Contains("nested deeper"));
    // A schema that refers to itself without consuming input: the grammar check refuses it.
    CHECK_THROWS_WITH(ember::check_grammar(ember::json_schema_to_grammar(R"({"$ref": "#"})")),
                      Catch::Contains("left recursion"));
}

// Tool calls (ember/tool_calls.hpp): the parser of each format, malformed replies left as text,
// format detection on the shared templates, and the grammar that forces a call.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "chat/json.hpp"
#include "ember/error.hpp"
#include "ember/tool_calls.hpp"
#include "support/shared_data.hpp"
#include "unit/grammar/grammar_test_util.hpp"

using ember::ParsedReply;
using ember::ToolCallFormat;
using ember::parse_tool_calls;

namespace {

bool is_alnum(const std::string& s) {
    for (const char c : s) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
    }
    return true;
}
bool is_openai_id(const std::string& id) { return id.size() == 29 && id.starts_with("call_") && is_alnum(id.substr(5)); }
bool is_mistral_id(const std::string& id) { return id.size() == 9 && is_alnum(id); }

// `text` with its first `from` replaced by `to` (the text must hold it).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

// Arguments are compared as JSON values (the text is json.dumps style).
ember::json::Value args_of(const ParsedReply& r, std::size_t i) { return ember::json::parse(r.tool_calls.at(i).arguments); }

void check_plain(const std::string& text, ToolCallFormat format) {
    INFO(text);
    const ParsedReply r = parse_tool_calls(text, format);
    CHECK(r.tool_calls.empty());
    CHECK(r.content == text);
}

}  // namespace

TEST_CASE("tool calls: hermes (Qwen 2.5, Qwen3, SmolLM3)", "[tool_calls]") {
    const ParsedReply one = parse_tool_calls(
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>",
        ToolCallFormat::hermes);
    REQUIRE(one.tool_calls.size() == 1);
    CHECK(one.content.empty());
    CHECK(one.tool_calls[0].name == "get_weather");
    CHECK(one.tool_calls[0].arguments == R"({"city": "Paris", "days": 3})");
    CHECK(is_openai_id(one.tool_calls[0].id));

    // Text before, two calls, text between; the closing tag of the last one missing (EOS came
    // first); arguments as a JSON string (some fine-tunes write them so).
    const ParsedReply two = parse_tool_calls(
        "Let me check both.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"s\": \"}{<tool_call>\\\"\"}}\n"
        "</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": \"{\\\"x\\\": [1, {\\\"y\\\": null}]}\"}",
        ToolCallFormat::hermes);
    REQUIRE(two.tool_calls.size() == 2);
    CHECK(two.content == "Let me check both.");
    CHECK(two.tool_calls[0].name == "a");
    CHECK(args_of(two, 0)["s"] == "}{<tool_call>\"");  // brackets and markers inside a string
    CHECK(two.tool_calls[1].name == "b");
    CHECK(args_of(two, 1)["x"][1]["y"].is_null());
    CHECK(two.tool_calls[0].id != two.tool_calls[1].id);

    // Unicode passes through unchanged.
    const ParsedReply uni = parse_tool_calls(
        "<tool_call>{\"name\": \"météo\", \"arguments\": {\"ville\": \"Zürich 東京 \\u00e9\"}}</tool_call>",
        ToolCallFormat::hermes);
    REQUIRE(uni.tool_calls.size() == 1);
    CHECK(uni.tool_calls[0].name == "météo");
    CHECK(args_of(uni, 0)["ville"] == "Zürich 東京 é");
}

TEST_CASE("tool calls: malformed hermes calls stay text", "[tool_calls]") {
    for (const char* text : {
             "no calls here",
             "",
             "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",  // truncated
             "<tool_call>\n{\"arguments\": {}}\n</tool_call>",                             // no name
             "<tool_call>\n{\"name\": \"\", \"arguments\": {}}\n</tool_call>",             // empty name
             "<tool_call>\n{\"name\": 3, \"arguments\": {}}\n</tool_call>",                // name not a string
             "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",                               // no arguments
             "<tool_call>\n{\"name\": \"f\", \"arguments\": [1]}\n</tool_call>",           // not an object
             "<tool_call>\n{\"name\": \"f\", \"arguments\": \"{oops\"}\n</tool_call>",     // string, not JSON
             "<tool_call>\n{\"name\": \"f\" \"arguments\": {}}\n</tool_call>",             // bad JSON
             "<tool_call>\n[{\"name\": \"f\", \"arguments\": {}}]\n</tool_call>",          // not an object
             "<tool_call>",
             "<tool_call>{",
             "<tool_call>{\"\\",
             "{\"name\": \"f\", \"arguments\": {}}",  // no tags
         }) {
        check_plain(text, ToolCallFormat::hermes);
    }
    // A bad block stays text next to a good one.
    const ParsedReply r = parse_tool_calls(
        "<tool_call>{\"name\": 1}</tool_call><tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>",
        ToolCallFormat::hermes);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].name == "g");
    CHECK(r.content == "<tool_call>{\"name\": 1}</tool_call>");
}

TEST_CASE("tool calls: llama 3.x", "[tool_calls]") {
    const ParsedReply one =
        parse_tool_calls("{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", ToolCallFormat::llama3);
    REQUIRE(one.tool_calls.size() == 1);
    CHECK(one.content.empty());
    CHECK(one.tool_calls[0].name == "get_weather");
    CHECK(one.tool_calls[0].arguments == R"({"city": "Paris"})");
    CHECK(is_openai_id(one.tool_calls[0].id));

    // <|python_tag|>, "type": "function", "arguments" and two calls separated by ';'.
    const ParsedReply two = parse_tool_calls(
        "<|python_tag|>{\"type\": \"function\", \"name\": \"a\", \"parameters\": {\"q\": \"x;y\"}}; "
        "{\"name\": \"b\", \"arguments\": {}}\n",
        ToolCallFormat::llama3);
    REQUIRE(two.tool_calls.size() == 2);
    CHECK(two.tool_calls[0].name == "a");
    CHECK(args_of(two, 0)["q"] == "x;y");
    CHECK(two.tool_calls[1].name == "b");
    CHECK(two.tool_calls[1].arguments == "{}");

    const ParsedReply before = parse_tool_calls("Sure.<|python_tag|>{\"name\": \"a\", \"parameters\": {}}",
                                                ToolCallFormat::llama3);
    REQUIRE(before.tool_calls.size() == 1);
    CHECK(before.content == "Sure.");

    for (const char* text : {
             "The weather is nice.",
             "{\"name\": \"Bob\", \"age\": 3}",                                   // JSON, but no call
             "Here: {\"name\": \"a\", \"parameters\": {}}",                       // not the whole reply
             "{\"name\": \"a\", \"parameters\": {}} and more",                    // text after
             "{\"name\": \"a\", \"parameters\": {\"q\": 1}",                      // truncated
             "<|python_tag|>brave_search.call(query=\"x\")",                      // built-in tool
             "{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\"}",          // second is bad
         }) {
        check_plain(text, ToolCallFormat::llama3);
    }
}

TEST_CASE("tool calls: mistral", "[tool_calls]") {
    // Nemo: a JSON array, ids of 9 letters and digits (kept when the model wrote one).
    const ParsedReply nemo = parse_tool_calls(
        "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"n\": 1}}, "
        "{\"name\": \"b\", \"arguments\": {\"s\": \"[x]\"}, \"id\": \"abcDEF123\"}]",
        ToolCallFormat::mistral);
    REQUIRE(nemo.tool_calls.size() == 2);
    CHECK(nemo.content.empty());
    CHECK(nemo.tool_calls[0].name == "a");
    CHECK(is_mistral_id(nemo.tool_calls[0].id));
    CHECK(args_of(nemo, 1)["s"] == "[x]");
    CHECK(nemo.tool_calls[1].id == "abcDEF123");

    // Without the marker (a control token a detokenizer leaves out), the array alone.
    const ParsedReply bare = parse_tool_calls(" [{\"name\": \"a\", \"arguments\": {}}] ", ToolCallFormat::mistral);
    REQUIRE(bare.tool_calls.size() == 1);

    // Small 3.2: name[ARGS]{...}, repeated; [CALL_ID] as the template writes it back.
    const ParsedReply small = parse_tool_calls(
        "I'll look.[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]get_time[CALL_ID]x1y2z3w4v[ARGS]{}",
        ToolCallFormat::mistral_args);
    REQUIRE(small.tool_calls.size() == 2);
    CHECK(small.content == "I'll look.");
    CHECK(small.tool_calls[0].name == "get_weather");
    CHECK(small.tool_calls[0].arguments == R"({"city": "Paris"})");
    CHECK(is_mistral_id(small.tool_calls[0].id));
    CHECK(small.tool_calls[1].id == "x1y2z3w4v");

    for (const char* text : {
             "Plain answer [with brackets].",
             "[1, 2, 3]",
             "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}",     // truncated
             "[TOOL_CALLS][{\"arguments\": {}}]",                      // no name
             "[TOOL_CALLS][]",
             "[TOOL_CALLS]get_weather[ARGS]{\"city\": ",               // truncated
             "[TOOL_CALLS]get_weather{\"city\": \"x\"}",               // no [ARGS]
             "[TOOL_CALLS][ARGS]{}",                                    // no name
             "[TOOL_CALLS]",
         }) {
        check_plain(text, ToolCallFormat::mistral_args);
        check_plain(text, ToolCallFormat::mistral);
    }
}

TEST_CASE("tool calls: the format of the shared templates", "[tool_calls][shared]") {
    EMBER_REQUIRE_SHARED("chat-templates/README.md");
    const std::pair<const char*, ToolCallFormat> expected[] = {
        {"Qwen-Qwen2.5-7B-Instruct.jinja", ToolCallFormat::hermes},
        {"HuggingFaceTB-SmolLM3-3B.jinja", ToolCallFormat::hermes},
        {"meta-llama-Llama-3.1-8B-Instruct.jinja", ToolCallFormat::llama3},
        {"mistralai-Mistral-Nemo-Instruct-2407.jinja", ToolCallFormat::mistral},
        {"Mistral-Small-3.2-24B-Instruct-2506.jinja", ToolCallFormat::mistral_args},
        {"google-gemma-2-2b-it.jinja", ToolCallFormat::hermes},
    };
    for (const auto& [file, format] : expected) {
        const std::string relative = std::string("chat-templates/") + file;
        if (EMBER_SHARED_MISSING(relative)) continue;
        std::ifstream in(ember_test::shared_file(relative), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        INFO(file);
        CHECK(ember::detect_tool_call_format(text.str()) == format);
    }
    CHECK(std::string(ember::tool_call_format_name(ToolCallFormat::mistral_args)) == "mistral_args");
}

TEST_CASE("tool calls: the grammar forces a call that the parser reads back", "[tool_calls][grammar]") {
    const std::string tools = R"([
        {"type": "function", "function": {"name": "get_weather", "description": "Weather",
         "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                        "days": {"type": "integer", "minimum": 1, "maximum": 7}}, "required": ["city", "days"]}}},
        {"type": "function", "function": {"name": "now"}}])";
    struct Case {
        ToolCallFormat format;
        std::string call;  // a reply calling get_weather
        std::string now;   // one calling now
        std::string sep;   // between parallel calls
    };
    const Case cases[] = {
        {ToolCallFormat::hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>",
         "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>", "\n"},
        {ToolCallFormat::llama3, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 3}}",
         "{\"name\": \"now\", \"parameters\": {}}", "; "},
        {ToolCallFormat::mistral_args, "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\", \"days\": 3}",
         "[TOOL_CALLS]now[ARGS]{}", ""},
    };
    for (const Case& c : cases) {
        INFO(ember::tool_call_format_name(c.format));
        const std::string any = ember::tool_call_grammar(tools, c.format);
        CHECK(grammar_test::accepts(any, c.call));
        CHECK(grammar_test::accepts(any, c.now));
        CHECK(grammar_test::accepts(any, c.call + c.sep + c.now));
        CHECK_FALSE(grammar_test::accepts(any, "Hello"));
        CHECK_FALSE(grammar_test::accepts(any, c.call.substr(0, c.call.size() - 3)));
        const ParsedReply back = parse_tool_calls(c.call + c.sep + c.now, c.format);
        REQUIRE(back.tool_calls.size() == 2);
        CHECK(back.tool_calls[0].name == "get_weather");
        CHECK(back.tool_calls[1].name == "now");

        // Schema violations: days out of range, a missing required field, an unknown function.
        CHECK_FALSE(grammar_test::accepts(any, replaced(c.call, "3}", "9}")));
        CHECK_FALSE(grammar_test::accepts(any, replaced(c.call, ", \"days\": 3", "")));
        CHECK_FALSE(grammar_test::accepts(any, replaced(c.call, "get_weather", "get_wether")));

        // Only one function, only one call.
        const std::string only = ember::tool_call_grammar(tools, c.format, {.function = "now", .parallel = false});
        CHECK(grammar_test::accepts(only, c.now));
        CHECK_FALSE(grammar_test::accepts(only, c.call));
        CHECK_FALSE(grammar_test::accepts(only, c.now + c.sep + c.now));
    }
    const std::string nemo = ember::tool_call_grammar(tools, ToolCallFormat::mistral);
    CHECK(grammar_test::accepts(nemo, "[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}, "
                                      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\", \"days\": 1}}]"));
}

TEST_CASE("tool calls: bad tools for the grammar are errors naming the tool", "[tool_calls][grammar]") {
    auto message = [](const std::string& tools, const std::string& function = {}) {
        try {
            (void)ember::tool_call_grammar(tools, ToolCallFormat::hermes, {.function = function});
        } catch (const ember::Error& e) {
            return std::string(e.what());
        }
        return std::string("<no error>");
    };
    CHECK_THAT(message("[]"), Catch::Contains("non-empty JSON array"));
    CHECK_THAT(message("{"), Catch::Contains("tools"));
    CHECK_THAT(message(R"([{"type": "function"}])"), Catch::Contains("tools[0] has no \"function\""));
    CHECK_THAT(message(R"([{"function": {"name": ""}}])"), Catch::Contains("tools[0].function.name"));
    CHECK_THAT(message(R"([{"function": {"name": "f", "parameters": 3}}])"), Catch::Contains("parameters"));
    CHECK_THAT(message(R"([{"function": {"name": "f", "parameters": {"type": "wat"}}}])"),
               Catch::Contains("function 'f'"));
    CHECK_THAT(message(R"([{"function": {"name": "f"}}])", "g"), Catch::Contains("no function named 'g'"));
}

TEST_CASE("tool calls: the part of a partial reply that is surely content", "[tool_calls]") {
    using ember::tool_call_free_prefix;
    CHECK(tool_call_free_prefix("Hello there", ToolCallFormat::hermes) == 11);
    CHECK(tool_call_free_prefix("Hello <tool", ToolCallFormat::hermes) == 6);
    CHECK(tool_call_free_prefix("Hello <tool_call>{\"na", ToolCallFormat::hermes) == 6);
    CHECK(tool_call_free_prefix("a < b", ToolCallFormat::hermes) == 5);
    CHECK(tool_call_free_prefix("", ToolCallFormat::hermes) == 0);
    CHECK(tool_call_free_prefix("  ", ToolCallFormat::llama3) == 0);
    CHECK(tool_call_free_prefix(" {\"name\"", ToolCallFormat::llama3) == 0);
    CHECK(tool_call_free_prefix("Sure<|python", ToolCallFormat::llama3) == 4);
    CHECK(tool_call_free_prefix("It is {warm}", ToolCallFormat::llama3) == 12);
    CHECK(tool_call_free_prefix("[{\"name\"", ToolCallFormat::mistral) == 0);
    CHECK(tool_call_free_prefix("Ok [TOOL_CALLS]f[ARGS]", ToolCallFormat::mistral_args) == 3);
    CHECK(tool_call_free_prefix("Ok [TOOL", ToolCallFormat::mistral_args) == 3);
    CHECK(tool_call_free_prefix("Ok [x]", ToolCallFormat::mistral) == 6);
}

TEST_CASE("tool calls: every cut of a reply, in every format, parses without error", "[tool_calls]") {
    const std::string replies[] = {
        "Hi.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {\"s\": \"x\\\"}\\\\\", \"n\": [1, {\"k\": null}]}}\n</tool_call>",
        "<|python_tag|>{\"name\": \"a\", \"parameters\": {\"q\": \"\xE6\x9D\xB1\"}}; {\"name\": \"b\", \"parameters\": {}}",
        "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"x\": [\"]\"]}}]",
        "ok[TOOL_CALLS]a[CALL_ID]abc123xyz[ARGS]{\"x\": 1}[TOOL_CALLS]b[ARGS]{}",
    };
    const ToolCallFormat formats[] = {ToolCallFormat::hermes, ToolCallFormat::llama3, ToolCallFormat::mistral,
                                      ToolCallFormat::mistral_args};
    for (const std::string& reply : replies) {
        for (const ToolCallFormat format : formats) {
            for (std::size_t n = 0; n <= reply.size(); ++n) {
                const std::string cut = reply.substr(0, n);
                const ParsedReply r = parse_tool_calls(cut, format);
                CHECK(ember::tool_call_free_prefix(cut, format) <= n);
                for (const ember::ToolCall& call : r.tool_calls) {
                    CHECK_FALSE(call.name.empty());
                    CHECK(ember::json::parse(call.arguments).is_object());
                }
                if (r.tool_calls.empty()) CHECK(r.content == cut);
            }
        }
    }
}

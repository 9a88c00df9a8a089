// Interpreter behaviour that the reference table does not cover: syntax errors with their
// position, sandbox limits, the chat API (extra variables, tool calls, dates, ChatML default).
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "chat/chat_template.hpp"
#include "chat/jinja_parser.hpp"
#include "render_helpers.hpp"

using chat_test::render_error;
using chat_test::render_with_vars;

namespace {

std::string parse_error(const std::string& source) {
    try {
        ember::chat::ChatTemplate tpl(source);
    } catch (const ember::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST_CASE("jinja: syntax errors name line and column", "[chat_template][errors]") {
    CHECK(parse_error("line1\n{% if x %}\nabc") ==
          "chat template: line 3, column 4: unexpected end of template, expected 'elif' or 'else' or 'endif'");
    CHECK(parse_error("a\n  {{ 1 + }}") == "chat template: line 2, column 10: unexpected '}}'");
    CHECK(parse_error("{% for x in y %}\n  {% endif %}") ==
          "chat template: line 2, column 6: unexpected 'endif', expected 'else' or 'endfor'");
    CHECK(parse_error("x\n{{ 'abc }}") == "chat template: line 2, column 4: unterminated string");
    CHECK(parse_error("{% include 'x' %}") == "chat template: line 1, column 4: unknown or unsupported tag 'include'");
    CHECK(parse_error("x\n{#  open") == "chat template: line 2, column 1: missing end of comment tag");
    CHECK(parse_error("{{ a b }}") == "chat template: line 1, column 6: expected '}}', got 'b'");
    CHECK(parse_error("{% break %}") == "chat template: line 1, column 4: 'break' outside of a for loop");
    CHECK(parse_error("{% set = 1 %}") == "chat template: line 1, column 8: expected a name, got '='");
    // Columns count characters, not bytes.
    CHECK(parse_error("é{{ ) }}") == "chat template: line 1, column 5: unexpected ')'");
}

TEST_CASE("jinja: runtime errors name the failing tag", "[chat_template][errors]") {
    CHECK(render_error("ok\n  {{ 1 + 'a' }}") ==
          "chat template: line 2, column 3: unsupported operand type(s) for +: 'int' and 'str'");
    CHECK(render_error("{% for m in messages %}\n{{ m.x.y }}{% endfor %}",
                       R"({"messages": [{"role": "user"}]})") ==
          "chat template: line 2, column 1: 'dict object' has no attribute 'x'");
    // raise_exception from inside a macro and a loop is still reported verbatim.
    CHECK(render_error("{% macro m() %}{{ raise_exception('inner: ' ~ 3) }}{% endmacro %}"
                       "{% for i in [1] %}{{ m() }}{% endfor %}") == "inner: 3");
}

TEST_CASE("jinja: sandbox limits", "[chat_template][limits]") {
    ember::jinja::RenderLimits small;
    small.max_output_bytes = 100;
    small.max_loop_iterations = 1000;
    small.max_call_depth = 10;
    small.max_range = 500;

    CHECK(render_with_vars("{% for i in range(10) %}{{ 'x' * 10 }}{% endfor %}", "{}", small).size() == 100);
    CHECK_THAT(render_error("{% for i in range(11) %}{{ 'x' * 10 }}{% endfor %}", "{}", small),
               Catch::Contains("output longer than the limit of 100 bytes"));
    CHECK_THAT(render_error("{% for i in range(400) %}{% for j in range(400) %}{% endfor %}{% endfor %}", "{}", small),
               Catch::Contains("loop iterations exceed the limit of 1000"));
    CHECK_THAT(render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "{}", small),
               Catch::Contains("macro calls nested deeper than 10"));
    CHECK_THAT(render_error("{{ range(501)|length }}", "{}", small), Catch::Contains("range too big"));
    CHECK_THAT(render_error("{% set s = 'x' * 1000 %}", "{}", small), Catch::Contains("template output limit"));
    CHECK_THAT(render_error("{{ [1] * 100000 }}", "{}", small), Catch::Contains("list repetition longer"));
    CHECK_THAT(render_error("{{ 2 ** 64 }}"), Catch::Contains("integer overflow"));

    // Defaults: unbounded recursion stops with an error instead of exhausting the stack.
    CHECK_THAT(render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
               Catch::Contains("macro calls nested deeper than 64"));
    std::string deep = std::string(5000, '(') + "1" + std::string(5000, ')');
    CHECK_THAT(parse_error("{{ " + deep + " }}"), Catch::Contains("nesting is deeper than"));
    CHECK_THAT(parse_error("{{ " + std::string(5000, '-') + "1 }}"), Catch::Contains("nesting is deeper than"));
    CHECK_THAT(parse_error("{{ " + std::string(3000, '[') + std::string(3000, ']') + " }}"),
               Catch::Contains("nesting is deeper than"));
    std::string chain = "{{ 1";
    for (int i = 0; i < 20000; ++i) chain += "+1";
    CHECK_THAT(parse_error(chain + " }}"), Catch::Contains("nesting is deeper than"));
    std::string attrs = "{{ a";
    for (int i = 0; i < 20000; ++i) attrs += ".b|trim";
    CHECK_THAT(parse_error(attrs + " }}"), Catch::Contains("nesting is deeper than"));
    std::string deep_blocks;
    for (int i = 0; i < 300; ++i) deep_blocks += "{% if true %}";
    CHECK_THAT(parse_error(deep_blocks), Catch::Contains("nesting is deeper than"));
}

TEST_CASE("jinja: no access outside the sandbox", "[chat_template][sandbox]") {
    // Names that Python templates use to escape a sandbox are plain undefined names here.
    CHECK(render_with_vars("{{ ''.__class__ }}|{{ cycler }}|{{ self }}|{{ config }}", "{}") == "|||");
    CHECK_THAT(render_error("{{ ''.__class__.__mro__ }}"), Catch::Contains("has no attribute '__class__'"));
    CHECK_THAT(render_error("{% import 'x' as y %}"), Catch::Contains("unknown or unsupported tag 'import'"));
    CHECK_THAT(render_error("{% extends 'base' %}"), Catch::Contains("unsupported tag 'extends'"));
    CHECK_THAT(render_error("{{ {'a': 1}.update({'b': 2}) }}"), Catch::Contains("unsafe"));
}

TEST_CASE("jinja: HF generation blocks render their body", "[chat_template][jinja]") {
    CHECK(render_with_vars("a{% generation %}b{{ 1 }}{% endgeneration %}c", "{}") == "ab1c");
}

TEST_CASE("chat template: messages with extra fields, tools and dates", "[chat_template][api]") {
    const char* source =
        "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content if m.content is string else '' }}"
        "{% for c in m.tool_calls|default([]) %}[{{ c.function.name }} {{ c.function.arguments|tojson }}]{% endfor %}"
        "{% endfor %}{% if tools %}T={{ tools|tojson }}{% endif %}|{{ strftime_now('%Y-%m') }}"
        "{% if add_generation_prompt %}<assistant>{% endif %}{{ eos_token }}";
    ember::chat::ChatTemplate tpl(source);
    ember::chat::ChatTemplateInput input;
    input.messages.push_back(ember::chat::make_message("user", "What's the weather?"));
    ember::json::Value call = ember::json::parse(
        R"({"role": "assistant", "content": null,
            "tool_calls": [{"type": "function", "function": {"name": "weather", "arguments": {"city": "Zürich"}}}]})");
    input.messages.push_back(call);
    input.extra["tools"] = ember::json::parse(R"([{"name": "weather"}])");
    input.bos_token = "<s>";
    input.eos_token = "</s>";
    input.add_generation_prompt = true;
    // 2024-07-26 12:00 UTC: the same year and month in every time zone.
    input.now = std::chrono::system_clock::from_time_t(1721995200);
    CHECK(tpl.render(input) ==
          "<s><user>What's the weather?<assistant>[weather {\"city\": \"Zürich\"}]"
          "T=[{\"name\": \"weather\"}]|2024-07<assistant></s>");

    input.fixed_date = "DATE";
    CHECK_THAT(tpl.render(input), Catch::Contains("|DATE<assistant>"));

    // The core variables cannot be overridden through extra.
    input.extra["bos_token"] = "X";
    CHECK(tpl.render(input).rfind("<s>", 0) == 0);
}

TEST_CASE("chat template: default ChatML template", "[chat_template][api]") {
    ember::chat::ChatTemplate tpl(ember::chat::kDefaultChatMlTemplate);
    ember::chat::ChatTemplateInput input;
    input.messages.push_back(ember::chat::make_message("system", "Be brief."));
    input.messages.push_back(ember::chat::make_message("user", "Hi"));
    CHECK(tpl.render(input) == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");
    input.add_generation_prompt = true;
    CHECK(tpl.render(input) ==
          "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("chat template: one parsed template renders on many threads", "[chat_template][api]") {
    ember::chat::ChatTemplate tpl(
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endfor %}"
        "{{ ns.n }}");
    auto run = [&](const std::string& text, std::string& out) {
        ember::chat::ChatTemplateInput input;
        for (int i = 0; i < 200; ++i) input.messages.push_back(ember::chat::make_message("user", text));
        for (int k = 0; k < 20; ++k) out = tpl.render(input);
    };
    std::string a, b;
    std::thread ta(run, "a", std::ref(a)), tb(run, "b", std::ref(b));
    ta.join();
    tb.join();
    CHECK(a == std::string(200, 'a') + "200");
    CHECK(b == std::string(200, 'b') + "200");
}

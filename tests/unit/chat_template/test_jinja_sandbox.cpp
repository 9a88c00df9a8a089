// Hostile templates against the sandbox's size limits (jinja_sandbox.hpp). Chat templates come
// from model files: each case below would ask for gigabytes or hours without the limits, and must
// instead fail fast with an ember::Error naming the tag and the limit. Most cases run under small
// limits (same code paths, less work); a few use the defaults.
#include <catch2/catch.hpp>

#include <string>

#include "render_helpers.hpp"

using chat_test::render_error;
using chat_test::render_with_vars;
using Catch::Contains;

namespace {

// Limits small enough that every hostile case fails within a few kilobytes of work.
ember::jinja::RenderLimits small_limits() {
    ember::jinja::RenderLimits l;
    l.max_output_bytes = 64 << 10;
    l.max_range = 2000;
    l.max_total_bytes = 1 << 20;
    l.max_total_items = 50000;
    return l;
}

// The error of a template that loops `n` times over `body` with namespace `ns` (attributes `init`).
std::string loop_error(const std::string& init, const std::string& body, int n = 60,
                       ember::jinja::RenderLimits limits = small_limits()) {
    return render_error("{% set ns = namespace(" + init + ") %}{% for i in range(" + std::to_string(n) + ") %}" + body +
                        "{% endfor %}{{ ns|length }}",
                        "{}", limits);
}

std::string small_error(const std::string& source) { return render_error(source, "{}", small_limits()); }

}  // namespace

TEST_CASE("jinja sandbox: lists cannot grow past max_range items, however they are built", "[chat_template][limits]") {
    // The issue's example, under the default limits: doubling asks for 2^40 items in 40 steps.
    CHECK_THAT(loop_error("l=[0]", "{% set ns.l = ns.l + ns.l %}", 40, {}),
               Contains("line 1, column") && Contains("larger than the template limit (100000 items)"));
    // Shared sub-lists: tiny in memory, 2^60 items when printed or compared.
    CHECK_THAT(loop_error("l=[0]", "{% set ns.l = [ns.l, ns.l] %}"), Contains("items (counting nested ones)"));
    CHECK_THAT(loop_error("d={}", "{% set ns.d = {'a': ns.d, 'b': ns.d} %}"), Contains("items (counting nested ones)"));
    CHECK_THAT(loop_error("l=[0]", "{% set ns.l = ns.l * 2 %}"), Contains("items"));
    CHECK_THAT(loop_error("l=[[0]]", "{% set ns.l = [ns.l] * 3 %}"), Contains("items (counting nested ones)"));
    CHECK_THAT(loop_error("l=[0]", "{% set ns.l = [ns.l, ns.l]|list %}"), Contains("items (counting nested ones)"));
    CHECK_THAT(loop_error("l=[[0]]", "{% set ns.l = [ns.l, ns.l]|sum(start=[]) %}"), Contains("items"));
    CHECK_THAT(loop_error("l=[0]", "{% set ns.l = (ns.l + ns.l)|map('string')|list %}"), Contains("items"));
    CHECK_THAT(small_error("{{ [[0] * 100] * 100 }}"), Contains("items (counting nested ones)"));
    CHECK_THAT(small_error("{{ dict(a=[[0] * 100] * 50) }}"), Contains("items"));
    // Nesting depth (printing and comparing recurse).
    CHECK_THAT(loop_error("l=0", "{% set ns.l = [ns.l] %}", 100), Contains("nested deeper than the template limit of 64"));
    // Splitting and iterating a long string.
    CHECK_THAT(small_error("{{ (',' * 10000).split(',')|length }}"), Contains("list of more than 2000 items"));
    CHECK_THAT(small_error("{% for c in 'x' * 10000 %}{% endfor %}"), Contains("list of more than 2000 items"));
    CHECK_THAT(small_error("{{ ('x' * 10000)|list|length }}"), Contains("list of more than 2000 items"));
}

TEST_CASE("jinja sandbox: strings cannot grow past max_output_bytes, however they are built", "[chat_template][limits]") {
    const std::string limit = "larger than the template limit (65536 bytes)";
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s ~ ns.s %}"), Contains(limit));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s + ns.s %}"), Contains(limit));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s * 2 %}"), Contains("limit (65536 bytes)"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = [ns.s, ns.s]|join %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s.join(['a', 'b', 'c']) %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s|replace('x', 'xx') %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s.replace('x', 'xxx') %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = '%s%s' % (ns.s, ns.s) %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = '{}{}'.format(ns.s, ns.s) %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s|center(ns.s|length * 2 + 1) %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x\\n'", "{% set ns.s = (ns.s ~ ns.s)|indent(8) %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s ~ ns.s|string ~ ns.s|tojson %}"), Contains("limit"));
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = [ns.s, ns.s]|string %}"), Contains("limit"));
    // Under the default limits (16 MiB).
    CHECK_THAT(loop_error("s='x'", "{% set ns.s = ns.s ~ ns.s %}", 60, {}),
               Contains("larger than the template limit (16777216 bytes)"));
    CHECK_THAT(render_error("{{ 'x'|center(1000000000) }}"), Contains("template output limit"));
    CHECK_THAT(small_error("{{ ('\\n' * 10000)|indent(1000, blank=true) }}"), Contains("limit"));
    CHECK_THAT(small_error("{{ ('ab\\n' * 1000)|indent(1000, blank=true) }}"), Contains("text longer than the template limit"));
    // Lists of shared strings: each string is small, the list's text is not.
    CHECK_THAT(small_error("{{ ['x' * 10000] * 20 }}"), Contains("holding 200000 bytes of text"));
    CHECK_THAT(small_error("{{ (['x' * 10000] * 20)|map('upper')|list }}"), Contains("limit"));
    // Format widths are bounded before any buffer is sized.
    CHECK_THAT(render_error("{{ '%99999999999999s' % 'x' }}"), Contains("format width or precision larger than 65536"));
    CHECK_THAT(render_error("{{ '{:99999999999999999999}'.format(1) }}"), Contains("format width larger than 65536"));
    CHECK_THAT(render_error("{{ '{:.99999999999}'.format(1.5) }}"), Contains("format precision larger than 65536"));
    // tojson with indentation repeats the indent per item and level.
    CHECK_THAT(small_error("{% set l = [[[[0] * 10] * 10] * 10] %}{{ l|tojson(indent=64) }}"), Contains("limit"));
}

TEST_CASE("jinja sandbox: total work of one render is bounded", "[chat_template][limits]") {
    // Quadratic loops: every value stays small enough, but the copies add up.
    CHECK_THAT(loop_error("l=[]", "{% set ns.l = ns.l + [i] %}", 2000),
               Contains("list or dict items in one render (the sandbox's limit)"));
    CHECK_THAT(small_error("{% set big = 'x' * 60000 %}{% for i in range(1000) %}{% set y = big ~ 'a' %}{% endfor %}"),
               Contains("bytes of text in one render (the sandbox's limit)"));
    // A namespace printed many times inside a list: the list is small, its text is not.
    CHECK_THAT(small_error("{% set ns = namespace(s='x' * 10000) %}{{ [ns] * 100 }}"),
               Contains("printed value longer than the template limit"));
}

TEST_CASE("jinja sandbox: namespaces cannot hold namespaces (no reference cycles)", "[chat_template][limits]") {
    const std::string message = "a namespace attribute cannot hold a namespace or loop object";
    CHECK_THAT(render_error("{% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ ns }}"), Contains(message));
    CHECK_THAT(render_error("{% set ns = namespace(a=1) %}{% set ns.a = [1, {'k': ns}] %}{{ ns }}"), Contains(message));
    CHECK_THAT(render_error("{% set ns = namespace(a=1) %}{% for x in [1] %}{% set ns.a = loop %}{% endfor %}"),
               Contains(message));
    CHECK_THAT(render_error("{% set a = namespace() %}{{ namespace(b=a) }}"), Contains(message));
    // Namespaces in plain lists and dicts are fine.
    CHECK(render_with_vars("{% set ns = namespace(a=1) %}{% set l = [ns, {'n': ns}] %}{{ l[1].n.a }}", "{}") == "1");
}

TEST_CASE("jinja sandbox: ordinary templates stay well inside the limits", "[chat_template][limits]") {
    // 1,000 messages of 1 KiB, accumulated into one string the slow way and printed.
    std::string messages = "[";
    for (int i = 0; i < 1000; ++i) {
        if (i) messages += ",";
        messages += R"({"role": "user", "content": ")" + std::string(1024, 'a' + i % 26) + "\"}";
    }
    messages += "]";
    const std::string out = render_with_vars(
        "{% set ns = namespace(s='', l=[]) %}{% for m in messages %}{% set ns.s = ns.s ~ m.content[:8] %}"
        "{% set ns.l = ns.l + [m.role] %}{{ m.role }}: {{ m.content }}\n{% endfor %}{{ ns.s|length }} {{ ns.l|length }}",
        R"({"messages": )" + messages + "}");
    CHECK(out.size() > 1000 * 1024);
    CHECK(out.substr(out.size() - 9) == "8000 1000");
}

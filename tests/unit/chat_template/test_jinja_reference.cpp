// The interpreter against renderings made by Python jinja2 in transformers' configuration.
#include <catch2/catch.hpp>

#include <string>

#include "jinja_reference_cases.hpp"
#include "render_helpers.hpp"

TEST_CASE("jinja: renders exactly as jinja2 does (reference table)", "[chat_template][jinja]") {
    int passed = 0, total = 0;
    for (const auto& c : jinja_reference::kRenders) {
        INFO("case " << c.name << "\ntemplate: " << c.source);
        ++total;
        std::string out;
        try {
            out = chat_test::render_with_vars(c.source, c.vars);
        } catch (const ember::Error& e) {
            FAIL_CHECK("threw: " << e.what());
            continue;
        }
        CHECK(out == c.expected);
        if (out == c.expected) ++passed;
    }
    REQUIRE(total >= 60);
    CHECK(passed == total);
}

TEST_CASE("jinja: runtime errors carry jinja2's message", "[chat_template][jinja]") {
    for (const auto& c : jinja_reference::kErrors) {
        INFO("case " << c.name << "\ntemplate: " << c.source);
        std::string message = chat_test::render_error(c.source, c.vars);
        std::string expected = c.expected;
        if (std::string(c.name) == "raise") {
            CHECK(message == expected);  // raise_exception: exactly the template's message
        } else {
            CHECK(message.rfind("chat template: line ", 0) == 0);
            REQUIRE(message.size() >= expected.size());
            CHECK(message.substr(message.size() - expected.size()) == expected);
        }
    }
}

// ember::printable and ember::json_escape: what every ember::Error message and the tools'
// output go through, so bytes from model files never reach a terminal or a JSON line raw.
#include <catch2/catch.hpp>

#include <string>

#include "ember/error.hpp"
#include "ember/text.hpp"
#include "runtime/fail.hpp"

using namespace std::string_literals;

TEST_CASE("printable: controls, NUL, C1, bidi overrides and non-UTF-8 bytes become \\xNN", "[text]") {
    CHECK(ember::printable("plain text, 100%") == "plain text, 100%");
    CHECK(ember::printable("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
    CHECK(ember::printable("a\0b"s) == "a\\x00b");
    CHECK(ember::printable("line\nnext\ttab\r") == "line\\x0anext\\x09tab\\x0d");
    CHECK(ember::printable("\xff\xfe") == "\\xff\\xfe");
    CHECK(ember::printable("h\xc3\xa9llo \xe2\x96\x81 \xf0\x9f\x98\x80") == "h\xc3\xa9llo \xe2\x96\x81 \xf0\x9f\x98\x80");
    CHECK(ember::printable("\xc2\x9b" "31m") == "\\xc2\\x9b31m");             // C1 CSI
    CHECK(ember::printable("abc\xe2\x80\xae" "cba") == "abc\\xe2\\x80\\xaecba");  // RIGHT-TO-LEFT OVERRIDE
    CHECK(ember::printable("\xe2\x80") == "\\xe2\\x80");                       // truncated sequence
    CHECK(ember::printable("\xc0\xaf") == "\\xc0\\xaf");                       // overlong
    CHECK(ember::printable("\x7f") == "\\x7f");
    // Idempotent: an escaped text is printable already.
    const std::string once = ember::printable("\x1b\0\xff"s);
    CHECK(ember::printable(once) == once);
    // Cut at a character boundary, never inside an escape, with "...".
    const std::string cut = ember::printable(std::string(100, '\x1b'), 20);
    CHECK(cut.size() <= 20);
    CHECK(cut == "\\x1b\\x1b\\x1b\\x1b...");
    CHECK(ember::printable(std::string(10, 'a'), 10) == std::string(10, 'a'));
}

TEST_CASE("json_escape: valid JSON string content for any bytes", "[text]") {
    CHECK(ember::json_escape("say \"hi\" \\ there") == "say \\\"hi\\\" \\\\ there");
    CHECK(ember::json_escape("a\nb\tc\rd") == "a\\nb\\tc\\rd");
    CHECK(ember::json_escape("\x1b[2J\0"s) == "\\u001b[2J\\u0000");
    CHECK(ember::json_escape("\x7f\xc2\x85") == "\\u007f\\u0085");
    CHECK(ember::json_escape("caf\xc3\xa9 \xe2\x96\x81") == "caf\xc3\xa9 \xe2\x96\x81");
    CHECK(ember::json_escape("bad \xff byte") == "bad \\\\xff byte");
    // No raw control byte and no byte that is not UTF-8 in the result.
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    const std::string j = ember::json_escape(all);
    for (const char c : j) {
        CHECK(static_cast<unsigned char>(c) >= 0x20);
        CHECK(static_cast<unsigned char>(c) < 0x80);  // every byte >= 0x80 alone is invalid UTF-8
    }
}

TEST_CASE("every ember::Error message is one printable line", "[text]") {
    try {
        ember::fail("model.gguf: architecture '\x1b]0;pwned\x07\0tail\xff'"s);
        FAIL("no throw");
    } catch (const ember::Error& e) {
        CHECK(std::string(e.what()) == "model.gguf: architecture '\\x1b]0;pwned\\x07\\x00tail\\xff'");
    }
    // fail_naming puts the file in front once.
    try {
        try {
            ember::fail("key 'x': expected string, found f32");
        } catch (const ember::Error& e) {
            ember::fail_naming("m.gguf", e);
        }
    } catch (const ember::Error& e) {
        CHECK(std::string(e.what()) == "m.gguf: key 'x': expected string, found f32");
        try {
            ember::fail_naming("m.gguf", e);
        } catch (const ember::Error& again) {
            CHECK(std::string(again.what()) == e.what());
        }
    }
}

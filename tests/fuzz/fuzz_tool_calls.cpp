// A model's reply read as tool calls, and a tools list turned into a grammar. The first byte
// picks the format.
#include "ember/error.hpp"
#include "ember/tool_calls.hpp"
#include "fuzz_target.hpp"

EMBER_FUZZ_TARGET(tool_calls) {
    if (size == 0) return;
    const auto format = static_cast<ember::ToolCallFormat>(data[0] % 4);
    const std::string_view text = ember_fuzz::as_text(data + 1, size - 1);
    try {
        (void)ember::parse_tool_calls(text, format);
    } catch (const ember::Error&) {
    }
    (void)ember::tool_call_free_prefix(text, format);
    (void)ember::detect_tool_call_format(text);
    try {
        (void)ember::tool_call_grammar(text, format);
    } catch (const ember::Error&) {
    }
}

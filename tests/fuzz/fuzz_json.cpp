// JSON as the chat templates, the schema converter and the API read it: parse and both dumps.
#include "chat/json.hpp"
#include "ember/error.hpp"
#include "fuzz_target.hpp"

EMBER_FUZZ_TARGET(json) {
    const std::string_view text = ember_fuzz::as_text(data, size);
    (void)ember::json::nesting_depth(text);
    (void)ember::json::bracket_end(text, 0);
    try {
        const ember::json::Value v = ember::json::parse(text);
        (void)ember::json::dump(v);
        (void)ember::json::dump(v, 2);
    } catch (const ember::Error&) {
    }
}

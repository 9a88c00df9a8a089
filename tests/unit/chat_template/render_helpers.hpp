// Shared helpers for the chat-template tests.
#pragma once

#include <string>

#include "chat/chat_template.hpp"
#include "chat/json.hpp"

namespace chat_test {

/// Renders `source` with the variables of a JSON object; "messages" becomes the conversation and
/// strftime_now returns "26 Jul 2024" (as in the reference renderings).
inline std::string render_with_vars(const std::string& source, const std::string& vars_json,
                                    ember::jinja::RenderLimits limits = {}) {
    ember::json::Value vars = ember::json::parse(vars_json);
    ember::chat::ChatTemplateInput input;
    input.fixed_date = "26 Jul 2024";
    for (const auto& item : vars.items()) {
        if (item.key() == "messages") input.messages = item.value();
        else input.extra[item.key()] = item.value();
    }
    return ember::chat::ChatTemplate(source, limits).render(input);
}

/// The ember::Error message of rendering, or "<no error>".
inline std::string render_error(const std::string& source, const std::string& vars_json = "{}",
                                ember::jinja::RenderLimits limits = {}) {
    try {
        render_with_vars(source, vars_json, limits);
    } catch (const ember::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace chat_test

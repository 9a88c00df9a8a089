// Jinja's built-in filters and tests (the subset chat templates use, plus common ones), with
// Hugging Face's tojson (json.dumps, ensure_ascii=False, keys in insertion order).
#pragma once

#include <string>

#include "chat/jinja_ops.hpp"
#include "chat/jinja_value.hpp"

namespace ember::jinja {

/// value | name(args). Throws "No filter named 'x'." for unknown names.
Value apply_filter(const std::string& name, const Value& value, const CallArgs& args, const RenderLimits& limits);
/// value is name(args). Throws "No test named 'x'." for unknown names.
bool apply_test(const std::string& name, const Value& value, const CallArgs& args, const RenderLimits& limits);

/// Hugging Face's tojson: json.dumps(x, ensure_ascii, indent, sort_keys).
std::string to_json_text(const Value& value, int indent, bool ensure_ascii, bool sort_keys);

}  // namespace ember::jinja

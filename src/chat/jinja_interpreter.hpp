// Renders a parsed Jinja template. The interpreter is a sandbox: templates can only read the
// values they are given and call the built-in filters, tests and globals; there is no file,
// network or environment access. Loops, macro recursion and the output are bounded, and so is
// every string, list and dict a render creates, one by one and in total, whichever operation
// made it (see jinja_sandbox.hpp for the limits and where they are enforced).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_ast.hpp"
#include "chat/jinja_ops.hpp"

namespace ember::jinja {

struct RenderOptions {
    RenderLimits limits;
    /// strftime_now(fmt); empty means the local time formatted with std::strftime.
    std::function<std::string(const std::string& format)> strftime_now;
};

/// Renders `tpl` with the variables in `context`. Globals: range, namespace, dict, joiner,
/// raise_exception, strftime_now.
///
/// Errors throw ember::Error: raise_exception(msg) gives exactly msg; any other runtime error
/// gives "chat template: line L, column C: message" (the tag that failed).
std::string render(const Template& tpl, const std::vector<std::pair<std::string, Value>>& context,
                   const RenderOptions& options);

}  // namespace ember::jinja

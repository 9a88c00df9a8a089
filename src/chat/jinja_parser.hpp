// Parses Jinja tokens into a Template tree (the statement and expression grammar of jinja2,
// with its operator precedence).
#pragma once

#include <string_view>

#include "chat/jinja_ast.hpp"
#include "chat/jinja_lexer.hpp"

namespace ember::jinja {

/// Nesting depth (expressions and blocks) the parser accepts before it reports an error.
inline constexpr int kMaxParseDepth = 200;

/// Throws ember::Error "chat template: line L, column C: ..." on a syntax error.
Template parse(std::string_view source, const LexerOptions& options = {});

}  // namespace ember::jinja

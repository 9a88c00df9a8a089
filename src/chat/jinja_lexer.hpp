// Splits a Jinja template into text and tag tokens, applying whitespace control ({%- -%},
// {{- -}}, {#- -#}, '+' to opt out) and the trim_blocks / lstrip_blocks options exactly as
// jinja2's lexer does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ember::jinja {

struct Token {
    enum class Type { text, var_begin, var_end, block_begin, block_end, name, string, integer, floating, op, eof };
    Type type;
    std::string value;  ///< Text, name, unescaped string literal, number text, or operator.
    int line = 1;
    int column = 1;
};

struct LexerOptions {
    bool trim_blocks = true;            ///< Drop the first newline after a block or comment tag.
    bool lstrip_blocks = true;          ///< Drop spaces/tabs before a block or comment tag on its line.
    bool keep_trailing_newline = false; ///< When false, one trailing newline of the source is dropped.
};

/// Throws ember::Error "chat template: line L, column C: ..." on a lexical error.
std::vector<Token> tokenize(std::string_view source, const LexerOptions& options = {});

/// "chat template: line L, column C: message" as ember::Error.
[[noreturn]] void fail_at(int line, int column, const std::string& message);

}  // namespace ember::jinja

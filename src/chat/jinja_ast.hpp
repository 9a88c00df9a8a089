// The syntax tree of a parsed Jinja template.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_value.hpp"

namespace ember::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Expr {
    enum class Kind {
        literal,    // value
        name,       // name
        list,       // args: elements
        tuple,      // args: elements
        dict,       // args: key, value, key, value, ...
        attribute,  // args[0].name
        subscript,  // args[0][args[1]]
        slice,      // args[0][args[1]:args[2]:args[3]] (null parts allowed)
        call,       // args[0](args[1..], kwargs)
        filter,     // args[0] | name(args[1..], kwargs)
        test,       // args[0] is [not] name(args[1..], kwargs); negated
        unary,      // name ("-", "+", "not") args[0]
        binary,     // args[0] name args[1]: + - * / // % ** ~ == != < <= > >= in "not in" and or
        conditional // args[0] if args[1] else args[2] (args[2] may be null)
    };
    Kind kind;
    int line = 0;
    int column = 0;
    std::string name;
    Value value;
    std::vector<ExprPtr> args;
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    bool negated = false;
    int depth = 1;  ///< Height of this subtree (the parser bounds it; evaluation recurses on it).
};

struct Stmt {
    enum class Kind {
        text,          // text
        output,        // {{ expr }}
        if_,           // branches (cond, body); else_body
        for_,          // targets in expr [if cond]: body; else_body
        set,           // targets = expr, or namespace_name.attribute = expr
        set_block,     // {% set targets %}body{% endset %}
        macro,         // name(params) body
        call_block,    // {% call[(params)] expr %}body{% endcall %}
        filter_block,  // {% filter expr %}body{% endfilter %}: expr is a filter chain on a placeholder
        break_,
        continue_,
        scope          // body rendered inline (generation blocks)
    };
    Kind kind;
    int line = 0;
    int column = 0;
    std::string text;
    ExprPtr expr;
    ExprPtr cond;
    std::vector<std::string> targets;
    std::string attribute;  // set ns.attribute
    std::vector<std::pair<ExprPtr, Body>> branches;
    Body body;
    Body else_body;
    std::vector<std::pair<std::string, ExprPtr>> params;  // macro / call parameters (default may be null)
};

/// The variable a {% filter %} / {% set x | f %} chain is applied to (not a valid identifier).
inline constexpr const char* kBlockPlaceholder = "\x01block";

struct Template {
    Body body;
};

}  // namespace ember::jinja

#include "chat/jinja_parser.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <initializer_list>

#include "runtime/fail.hpp"

// GCC 12's -Wrestrict misreads "literal" + std::string&& in libstdc++ (GCC bug 105651).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace ember::jinja {

namespace {

class Parser {
public:
    explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

    Template parse_template() {
        Template tpl;
        std::string end = parse_body(tpl.body, {});
        (void)end;
        return tpl;
    }

private:
    std::vector<Token> t_;
    std::size_t pos_ = 0;
    int depth_ = 0;

    struct DepthGuard {
        Parser& p;
        explicit DepthGuard(Parser& parser) : p(parser) {
            if (++p.depth_ > kMaxParseDepth)
                p.error_here("template nesting is deeper than " + std::to_string(kMaxParseDepth) + " levels");
        }
        ~DepthGuard() { --p.depth_; }
    };

    const Token& cur() const { return t_[pos_]; }
    const Token& peek(std::size_t k = 1) const {
        return t_[pos_ + k < t_.size() ? pos_ + k : t_.size() - 1];
    }
    void advance() {
        if (pos_ + 1 < t_.size()) ++pos_;
    }

    [[noreturn]] void error_here(const std::string& message) const {
        fail_at(cur().line, cur().column, message);
    }

    static std::string describe(const Token& t) {
        switch (t.type) {
            case Token::Type::text: return "template text";
            case Token::Type::var_begin: return "'{{'";
            case Token::Type::var_end: return "'}}'";
            case Token::Type::block_begin: return "'{%'";
            case Token::Type::block_end: return "'%}'";
            case Token::Type::name: return "'" + t.value + "'";
            case Token::Type::string: return "string literal";
            case Token::Type::integer:
            case Token::Type::floating: return "number '" + t.value + "'";
            case Token::Type::op: return "'" + t.value + "'";
            case Token::Type::eof: return "end of template";
        }
        return "token";
    }

    bool is_op(std::string_view op) const { return cur().type == Token::Type::op && cur().value == op; }
    bool is_name(std::string_view n) const { return cur().type == Token::Type::name && cur().value == n; }
    bool skip_op(std::string_view op) {
        if (!is_op(op)) return false;
        advance();
        return true;
    }
    bool skip_name(std::string_view n) {
        if (!is_name(n)) return false;
        advance();
        return true;
    }
    void expect_op(std::string_view op) {
        if (!skip_op(op)) error_here("expected '" + std::string(op) + "', got " + describe(cur()));
    }
    std::string expect_name() {
        if (cur().type != Token::Type::name) error_here("expected a name, got " + describe(cur()));
        std::string n = cur().value;
        advance();
        return n;
    }
    void expect_block_end() {
        if (cur().type != Token::Type::block_end) error_here("expected '%}', got " + describe(cur()));
        advance();
    }

    // Records the height of a node built from finished children and bounds it, so that long
    // left-nested chains (a + b + ..., a.b.c..., x|f|g...) cannot exhaust the stack later.
    ExprPtr seal(ExprPtr e) {
        int h = 0;
        for (const auto& a : e->args)
            if (a) h = std::max(h, a->depth);
        for (const auto& [k, v] : e->kwargs)
            if (v) h = std::max(h, v->depth);
        e->depth = h + 1;
        if (e->depth > kMaxParseDepth)
            fail_at(e->line, e->column, "template nesting is deeper than " + std::to_string(kMaxParseDepth) + " levels");
        return e;
    }

    ExprPtr node(Expr::Kind kind, const Token& at) {
        auto e = std::make_unique<Expr>();
        e->kind = kind;
        e->line = at.line;
        e->column = at.column;
        return e;
    }

    // ---- statements ---------------------------------------------------------------------

    // Parses statements until a block tag whose name is in `ends`; consumes "{% name" and
    // returns name. At the end of input returns "" (an error when `ends` is not empty).
    std::string parse_body(Body& body, std::initializer_list<std::string_view> ends) {
        DepthGuard guard(*this);
        for (;;) {
            const Token& t = cur();
            switch (t.type) {
                case Token::Type::eof:
                    if (ends.size() != 0) {
                        std::string want;
                        for (auto e : ends) want += (want.empty() ? "'" : " or '") + std::string(e) + "'";
                        error_here("unexpected end of template, expected " + want);
                    }
                    return "";
                case Token::Type::text: {
                    auto s = std::make_unique<Stmt>();
                    s->kind = Stmt::Kind::text;
                    s->line = t.line;
                    s->column = t.column;
                    s->text = t.value;
                    body.push_back(std::move(s));
                    advance();
                    break;
                }
                case Token::Type::var_begin: {
                    auto s = std::make_unique<Stmt>();
                    s->kind = Stmt::Kind::output;
                    s->line = t.line;
                    s->column = t.column;
                    advance();
                    s->expr = parse_tuple(true);
                    if (cur().type != Token::Type::var_end) error_here("expected '}}', got " + describe(cur()));
                    advance();
                    body.push_back(std::move(s));
                    break;
                }
                case Token::Type::block_begin: {
                    const Token& name = peek();
                    if (name.type == Token::Type::name) {
                        for (auto e : ends) {
                            if (name.value == e) {
                                advance();
                                advance();
                                return std::string(e);
                            }
                        }
                    }
                    if (name.type == Token::Type::name &&
                        (name.value.rfind("end", 0) == 0 || name.value == "elif" || name.value == "else")) {
                        std::string message = "unexpected '" + name.value + "'";
                        if (ends.size() != 0) {
                            message += ", expected ";
                            bool first = true;
                            for (auto e : ends) {
                                message += (first ? "'" : " or '") + std::string(e) + "'";
                                first = false;
                            }
                        }
                        fail_at(name.line, name.column, message);
                    }
                    body.push_back(parse_statement());
                    break;
                }
                default: error_here("unexpected " + describe(t));
            }
        }
    }

    StmtPtr make_stmt(Stmt::Kind kind, const Token& at) {
        auto s = std::make_unique<Stmt>();
        s->kind = kind;
        s->line = at.line;
        s->column = at.column;
        return s;
    }

    StmtPtr parse_statement() {
        Token begin = cur();
        advance();  // {%
        if (cur().type != Token::Type::name) error_here("expected a tag name, got " + describe(cur()));
        std::string tag = cur().value;
        Token at = cur();
        advance();
        if (tag == "if") return parse_if(begin);
        if (tag == "for") return parse_for(begin);
        if (tag == "set") return parse_set(begin);
        if (tag == "macro") return parse_macro(begin);
        if (tag == "call") return parse_call_block(begin);
        if (tag == "filter") return parse_filter_block(begin);
        if (tag == "generation") {
            auto s = make_stmt(Stmt::Kind::scope, begin);
            expect_block_end();
            parse_body(s->body, {"endgeneration"});
            expect_block_end();
            return s;
        }
        if (tag == "break" || tag == "continue") {
            if (loop_depth_ == 0) fail_at(at.line, at.column, "'" + tag + "' outside of a for loop");
            auto s = make_stmt(tag == "break" ? Stmt::Kind::break_ : Stmt::Kind::continue_, begin);
            expect_block_end();
            return s;
        }
        fail_at(at.line, at.column, "unknown or unsupported tag '" + tag + "'");
    }

    int loop_depth_ = 0;

    StmtPtr parse_if(const Token& begin) {
        auto s = make_stmt(Stmt::Kind::if_, begin);
        for (;;) {
            ExprPtr cond = parse_tuple(false);
            expect_block_end();
            Body body;
            std::string end = parse_body(body, {"elif", "else", "endif"});
            s->branches.emplace_back(std::move(cond), std::move(body));
            if (end == "elif") continue;
            if (end == "else") {
                expect_block_end();
                parse_body(s->else_body, {"endif"});
            }
            expect_block_end();
            return s;
        }
    }

    std::vector<std::string> parse_targets() {
        std::vector<std::string> names;
        bool paren = skip_op("(");
        names.push_back(expect_name());
        while (skip_op(",")) {
            if (cur().type != Token::Type::name || is_name("in")) break;
            names.push_back(expect_name());
        }
        if (paren) expect_op(")");
        return names;
    }

    StmtPtr parse_for(const Token& begin) {
        auto s = make_stmt(Stmt::Kind::for_, begin);
        s->targets = parse_targets();
        if (!skip_name("in")) error_here("expected 'in', got " + describe(cur()));
        s->expr = parse_tuple(false, true);
        if (skip_name("if")) s->cond = parse_expression(true);
        if (is_name("recursive")) error_here("recursive for loops are not supported");
        expect_block_end();
        ++loop_depth_;
        std::string end = parse_body(s->body, {"else", "endfor"});
        --loop_depth_;
        if (end == "else") {
            expect_block_end();
            parse_body(s->else_body, {"endfor"});
        }
        expect_block_end();
        return s;
    }

    StmtPtr parse_set(const Token& begin) {
        auto s = make_stmt(Stmt::Kind::set, begin);
        if (cur().type == Token::Type::name && peek().type == Token::Type::op && peek().value == ".") {
            s->targets.push_back(expect_name());
            advance();  // .
            s->attribute = expect_name();
        } else {
            s->targets = parse_targets();
        }
        if (skip_op("=")) {
            s->expr = parse_tuple(true);
            expect_block_end();
            return s;
        }
        if (!s->attribute.empty() || s->targets.size() != 1)
            error_here("expected '=', got " + describe(cur()));
        // Block set: {% set name %}...{% endset %} (with optional filters).
        s->kind = Stmt::Kind::set_block;
        if (is_op("|")) s->expr = parse_filter_chain(begin);
        expect_block_end();
        parse_body(s->body, {"endset"});
        expect_block_end();
        return s;
    }

    std::vector<std::pair<std::string, ExprPtr>> parse_params() {
        std::vector<std::pair<std::string, ExprPtr>> params;
        expect_op("(");
        while (!is_op(")")) {
            if (!params.empty()) expect_op(",");
            if (is_op(")")) break;
            std::string name = expect_name();
            ExprPtr def;
            if (skip_op("=")) def = parse_expression(true);
            params.emplace_back(std::move(name), std::move(def));
        }
        expect_op(")");
        return params;
    }

    StmtPtr parse_macro(const Token& begin) {
        auto s = make_stmt(Stmt::Kind::macro, begin);
        s->text = expect_name();
        s->params = parse_params();
        expect_block_end();
        int saved = loop_depth_;
        loop_depth_ = 0;
        parse_body(s->body, {"endmacro"});
        loop_depth_ = saved;
        if (cur().type == Token::Type::name) advance();  // {% endmacro name %}
        expect_block_end();
        return s;
    }

    StmtPtr parse_call_block(const Token& begin) {
        auto s = make_stmt(Stmt::Kind::call_block, begin);
        if (is_op("(")) s->params = parse_params();
        s->expr = parse_expression(true);
        if (s->expr->kind != Expr::Kind::call) error_here("expected a macro call in the call tag");
        expect_block_end();
        parse_body(s->body, {"endcall"});
        expect_block_end();
        return s;
    }

    // A filter chain applied to a placeholder (a null literal replaced at run time).
    ExprPtr parse_filter_chain(const Token& at) {
        ExprPtr subject = node(Expr::Kind::name, at);
        subject->name = kBlockPlaceholder;
        if (is_op("|")) {
            return parse_filter_expr(std::move(subject));
        }
        // {% filter upper %}: first filter without the pipe.
        ExprPtr f = parse_filter(std::move(subject));
        return parse_filter_expr(std::move(f));
    }

    StmtPtr parse_filter_block(const Token& begin) {
        auto s = make_stmt(Stmt::Kind::filter_block, begin);
        s->expr = parse_filter_chain(begin);
        expect_block_end();
        parse_body(s->body, {"endfilter"});
        expect_block_end();
        return s;
    }

    // ---- expressions --------------------------------------------------------------------

    bool at_tuple_end() const {
        const Token& t = cur();
        if (t.type == Token::Type::var_end || t.type == Token::Type::block_end || t.type == Token::Type::eof)
            return true;
        if (t.type == Token::Type::op && (t.value == ")" || t.value == "]" || t.value == "}")) return true;
        return false;
    }

    // Expression or implicit tuple "a, b". for_iter: also stops at 'if' / 'recursive'.
    ExprPtr parse_tuple(bool with_condexpr, bool for_iter = false) {
        Token at = cur();
        ExprPtr first = parse_expression(with_condexpr);
        if (!is_op(",")) return first;
        ExprPtr tuple = node(Expr::Kind::tuple, at);
        tuple->args.push_back(std::move(first));
        while (skip_op(",")) {
            if (at_tuple_end() || (for_iter && (is_name("if") || is_name("recursive")))) break;
            tuple->args.push_back(parse_expression(with_condexpr));
        }
        return tuple;
    }

    ExprPtr parse_expression(bool with_condexpr) {
        DepthGuard guard(*this);
        if (!with_condexpr) return parse_or();
        Token at = cur();
        ExprPtr expr = parse_or();
        while (skip_name("if")) {
            ExprPtr cond = parse_or();
            ExprPtr otherwise;
            if (skip_name("else")) otherwise = parse_expression(true);
            ExprPtr c = node(Expr::Kind::conditional, at);
            c->args.push_back(std::move(expr));
            c->args.push_back(std::move(cond));
            c->args.push_back(std::move(otherwise));
            expr = seal(std::move(c));
        }
        return expr;
    }

    ExprPtr binary(const Token& at, std::string op, ExprPtr left, ExprPtr right) {
        ExprPtr b = node(Expr::Kind::binary, at);
        b->name = std::move(op);
        b->args.push_back(std::move(left));
        b->args.push_back(std::move(right));
        return seal(std::move(b));
    }

    ExprPtr parse_or() {
        ExprPtr left = parse_and();
        while (is_name("or")) {
            Token at = cur();
            advance();
            left = binary(at, "or", std::move(left), parse_and());
        }
        return left;
    }

    ExprPtr parse_and() {
        ExprPtr left = parse_not();
        while (is_name("and")) {
            Token at = cur();
            advance();
            left = binary(at, "and", std::move(left), parse_not());
        }
        return left;
    }

    ExprPtr parse_not() {
        if (is_name("not")) {
            DepthGuard guard(*this);
            Token at = cur();
            advance();
            ExprPtr n = node(Expr::Kind::unary, at);
            n->name = "not";
            n->args.push_back(parse_not());
            return n;
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        ExprPtr left = parse_math1();
        for (;;) {
            Token at = cur();
            std::string op;
            if (cur().type == Token::Type::op &&
                (cur().value == "==" || cur().value == "!=" || cur().value == "<" || cur().value == "<=" ||
                 cur().value == ">" || cur().value == ">=")) {
                op = cur().value;
                advance();
            } else if (is_name("in")) {
                op = "in";
                advance();
            } else if (is_name("not") && peek().type == Token::Type::name && peek().value == "in") {
                op = "not in";
                advance();
                advance();
            } else {
                return left;
            }
            left = binary(at, op, std::move(left), parse_math1());
        }
    }

    ExprPtr parse_math1() {
        ExprPtr left = parse_concat();
        while (is_op("+") || is_op("-")) {
            Token at = cur();
            advance();
            left = binary(at, at.value, std::move(left), parse_concat());
        }
        return left;
    }

    ExprPtr parse_concat() {
        ExprPtr left = parse_math2();
        while (is_op("~")) {
            Token at = cur();
            advance();
            left = binary(at, "~", std::move(left), parse_math2());
        }
        return left;
    }

    ExprPtr parse_math2() {
        ExprPtr left = parse_pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            Token at = cur();
            advance();
            left = binary(at, at.value, std::move(left), parse_pow());
        }
        return left;
    }

    ExprPtr parse_pow() {
        ExprPtr left = parse_unary(true);
        while (is_op("**")) {
            Token at = cur();
            advance();
            left = binary(at, "**", std::move(left), parse_unary(true));
        }
        return left;
    }

    ExprPtr parse_unary(bool with_filter) {
        DepthGuard guard(*this);
        Token at = cur();
        ExprPtr n;
        if (is_op("-") || is_op("+")) {
            advance();
            n = node(Expr::Kind::unary, at);
            n->name = at.value;
            n->args.push_back(parse_unary(false));
        } else {
            n = parse_primary();
        }
        n = parse_postfix(std::move(n));
        if (with_filter) n = parse_filter_expr(std::move(n));
        return seal(std::move(n));
    }

    ExprPtr parse_primary() {
        Token at = cur();
        switch (at.type) {
            case Token::Type::name: {
                advance();
                ExprPtr n = node(Expr::Kind::literal, at);
                if (at.value == "true" || at.value == "True") n->value = Value(true);
                else if (at.value == "false" || at.value == "False") n->value = Value(false);
                else if (at.value == "none" || at.value == "None") n->value = Value::none();
                else {
                    n->kind = Expr::Kind::name;
                    n->name = at.value;
                }
                return n;
            }
            case Token::Type::string: {
                std::string s;
                while (cur().type == Token::Type::string) {  // adjacent literals concatenate
                    s += cur().value;
                    advance();
                }
                ExprPtr n = node(Expr::Kind::literal, at);
                n->value = Value(std::move(s));
                return n;
            }
            case Token::Type::integer: {
                advance();
                ExprPtr n = node(Expr::Kind::literal, at);
                std::int64_t v = 0;
                auto r = std::from_chars(at.value.data(), at.value.data() + at.value.size(), v);
                if (r.ec != std::errc()) fail_at(at.line, at.column, "integer literal out of range");
                n->value = Value(v);
                return n;
            }
            case Token::Type::floating: {
                advance();
                ExprPtr n = node(Expr::Kind::literal, at);
                n->value = Value(std::strtod(at.value.c_str(), nullptr));
                return n;
            }
            case Token::Type::op: {
                if (at.value == "(") {
                    advance();
                    if (skip_op(")")) {
                        ExprPtr t = node(Expr::Kind::tuple, at);
                        return t;
                    }
                    ExprPtr first = parse_expression(true);
                    if (skip_op(")")) return first;
                    ExprPtr t = node(Expr::Kind::tuple, at);
                    t->args.push_back(std::move(first));
                    while (skip_op(",")) {
                        if (is_op(")")) break;
                        t->args.push_back(parse_expression(true));
                    }
                    expect_op(")");
                    return t;
                }
                if (at.value == "[") {
                    advance();
                    ExprPtr l = node(Expr::Kind::list, at);
                    while (!is_op("]")) {
                        if (!l->args.empty()) expect_op(",");
                        if (is_op("]")) break;
                        l->args.push_back(parse_expression(true));
                    }
                    expect_op("]");
                    return l;
                }
                if (at.value == "{") {
                    advance();
                    ExprPtr d = node(Expr::Kind::dict, at);
                    while (!is_op("}")) {
                        if (!d->args.empty()) expect_op(",");
                        if (is_op("}")) break;
                        d->args.push_back(parse_expression(true));
                        expect_op(":");
                        d->args.push_back(parse_expression(true));
                    }
                    expect_op("}");
                    return d;
                }
                break;
            }
            default: break;
        }
        error_here("unexpected " + describe(at));
    }

    ExprPtr parse_postfix(ExprPtr n) {
        for (;;) {
            n = seal(std::move(n));
            Token at = cur();
            if (skip_op(".")) {
                if (cur().type == Token::Type::name) {
                    ExprPtr a = node(Expr::Kind::attribute, at);
                    a->name = cur().value;
                    advance();
                    a->args.push_back(std::move(n));
                    n = std::move(a);
                } else if (cur().type == Token::Type::integer) {
                    ExprPtr s = node(Expr::Kind::subscript, at);
                    ExprPtr idx = parse_primary();
                    s->args.push_back(std::move(n));
                    s->args.push_back(std::move(idx));
                    n = std::move(s);
                } else {
                    error_here("expected an attribute name, got " + describe(cur()));
                }
            } else if (skip_op("[")) {
                n = parse_subscript(at, std::move(n));
            } else if (is_op("(")) {
                n = parse_call(std::move(n));
            } else {
                return n;
            }
        }
    }

    ExprPtr parse_subscript(const Token& at, ExprPtr target) {
        ExprPtr parts[3];
        bool is_slice = false;
        if (!is_op(":")) parts[0] = parse_expression(true);
        if (skip_op(":")) {
            is_slice = true;
            if (!is_op("]") && !is_op(":")) parts[1] = parse_expression(true);
            if (skip_op(":")) {
                if (!is_op("]")) parts[2] = parse_expression(true);
            }
        } else if (is_op(",")) {
            ExprPtr t = node(Expr::Kind::tuple, at);
            t->args.push_back(std::move(parts[0]));
            while (skip_op(",")) {
                if (is_op("]")) break;
                t->args.push_back(parse_expression(true));
            }
            parts[0] = std::move(t);
        }
        expect_op("]");
        ExprPtr s = node(is_slice ? Expr::Kind::slice : Expr::Kind::subscript, at);
        s->args.push_back(std::move(target));
        s->args.push_back(std::move(parts[0]));
        if (is_slice) {
            s->args.push_back(std::move(parts[1]));
            s->args.push_back(std::move(parts[2]));
        }
        return s;
    }

    void parse_call_args(Expr& call) {
        expect_op("(");
        bool first = true;
        while (!is_op(")")) {
            if (!first) expect_op(",");
            first = false;
            if (is_op(")")) break;
            if (is_op("*") || is_op("**")) error_here("*args and **kwargs in calls are not supported");
            if (cur().type == Token::Type::name && peek().type == Token::Type::op && peek().value == "=") {
                std::string key = cur().value;
                advance();
                advance();
                call.kwargs.emplace_back(std::move(key), parse_expression(true));
            } else {
                if (!call.kwargs.empty()) error_here("positional argument after keyword argument");
                call.args.push_back(parse_expression(true));
            }
        }
        expect_op(")");
    }

    ExprPtr parse_call(ExprPtr callee) {
        ExprPtr c = node(Expr::Kind::call, cur());
        c->args.push_back(std::move(callee));
        parse_call_args(*c);
        return c;
    }

    std::string parse_dotted_name() {
        std::string name = expect_name();
        while (is_op(".") && peek().type == Token::Type::name) {
            advance();
            name += "." + expect_name();
        }
        return name;
    }

    ExprPtr parse_filter(ExprPtr subject) {
        ExprPtr f = node(Expr::Kind::filter, cur());
        f->name = parse_dotted_name();
        f->args.push_back(std::move(subject));
        if (is_op("(")) parse_call_args(*f);
        return f;
    }

    ExprPtr parse_filter_expr(ExprPtr n) {
        for (;;) {
            n = seal(std::move(n));
            if (skip_op("|")) {
                n = parse_filter(std::move(n));
            } else if (is_name("is")) {
                Token at = cur();
                advance();
                ExprPtr t = node(Expr::Kind::test, at);
                t->negated = skip_name("not");
                t->name = parse_dotted_name();
                t->args.push_back(std::move(n));
                const Token& c = cur();
                if (is_op("(")) {
                    parse_call_args(*t);
                } else if ((c.type == Token::Type::name || c.type == Token::Type::string ||
                            c.type == Token::Type::integer || c.type == Token::Type::floating ||
                            (c.type == Token::Type::op && (c.value == "(" || c.value == "[" || c.value == "{"))) &&
                           !(is_name("else") || is_name("or") || is_name("and"))) {
                    if (is_name("is")) error_here("you cannot chain multiple tests with is");
                    t->args.push_back(parse_postfix(parse_primary()));
                }
                n = std::move(t);
            } else if (is_op("(")) {
                n = parse_call(std::move(n));
            } else {
                return n;
            }
        }
    }
};

}  // namespace

Template parse(std::string_view source, const LexerOptions& options) {
    return Parser(tokenize(source, options)).parse_template();
}

}  // namespace ember::jinja

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

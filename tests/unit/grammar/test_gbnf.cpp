// GBNF parsing (syntax, errors, bounds) and matching strings against grammars.
#include <catch2/catch.hpp>
#include <string>

#include "ember/error.hpp"
#include "ember/grammar.hpp"
#include "grammar/grammar.hpp"
#include "grammar_test_util.hpp"

using grammar_test::accepts;
using grammar_test::Match;
using grammar_test::run;

namespace {

// The message of the ember::Error that parsing `gbnf` throws ("" when it parses).
std::string parse_error(std::string_view gbnf, const ember::grammar::Limits& limits = {}) {
    try {
        (void)ember::grammar::parse_gbnf(gbnf, limits);
    } catch (const ember::Error& e) {
        return e.what();
    }
    return "";
}

const char* const kArithmetic = R"gbnf(
# arithmetic expressions (left recursion rewritten as repetition)
root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
)gbnf";

const char* const kJson = R"gbnf(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws
array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws
string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)gbnf";

}  // namespace

TEST_CASE("gbnf: llama.cpp-style grammars parse and match", "[grammar][gbnf]") {
    CHECK(accepts(kArithmetic, "a+b=c\n"));
    CHECK(accepts(kArithmetic, "(1+x2)*3=7\n12=12\n"));
    CHECK(run(kArithmetic, "1+ 2=3\n") == Match::rejected);
    CHECK(run(kArithmetic, "a+b=") == Match::prefix);
    CHECK(run(kArithmetic, "a+=") == Match::rejected);

    CHECK(accepts(kJson, R"({"a": [1, 2.5, -3e12, true, null], "b\n": {"c": "\u00e9\"x"}})"));
    CHECK(accepts(kJson, "{}"));
    CHECK(run(kJson, R"({"a": )") == Match::prefix);
    CHECK(run(kJson, R"({"a" 1})") == Match::rejected);
    CHECK(run(kJson, R"({"a": 01})") == Match::rejected);
}

TEST_CASE("gbnf: literals, classes, escapes and UTF-8", "[grammar][gbnf]") {
    CHECK(accepts(R"(root ::= "a\tb\n\\\"\x41\u00e9\U0001F600")", "a\tb\n\\\"A\xC3\xA9\xF0\x9F\x98\x80"));
    CHECK(accepts(R"(root ::= [a-c0-9_\-\]]+)", "abc019_-]"));
    CHECK(run(R"(root ::= [a-c]+)", "abd") == Match::rejected);
    CHECK(accepts(R"(root ::= [^a-c\n]+)", "xyz\xC3\xA9"));
    CHECK(run(R"(root ::= [^a-c\n]+)", "xa") == Match::rejected);
    CHECK(accepts("root ::= [ぁ-ゟ]+", "\xE3\x81\x82\xE3\x82\x93"));  // あん
    CHECK(accepts("root ::= \"é\" .", "\xC3\xA9\xF0\x9F\x98\x80"));
    CHECK(run("root ::= \"é\"", "\xC3\xA8") == Match::rejected);
    // Invalid UTF-8 never matches, even a class that allows everything.
    CHECK(run("root ::= .+", "\x80") == Match::rejected);
    CHECK(run("root ::= .+", "\xC0\xAF") == Match::rejected);        // overlong
    CHECK(run("root ::= .+", "\xED\xA0\x80") == Match::rejected);    // surrogate
    CHECK(run("root ::= .+", "\xF4\x90\x80\x80") == Match::rejected);  // past U+10FFFF
}

TEST_CASE("gbnf: repetitions", "[grammar][gbnf]") {
    const char* g = R"(root ::= "a"{2,4} "b"{3} "c"{1,} "d"{0,2} ("xy"){2})";
    CHECK(accepts(g, "aabbbcxyxy"));
    CHECK(accepts(g, "aaaabbbcccddxyxy"));
    CHECK(run(g, "abbb") == Match::rejected);
    CHECK(run(g, "aaaaab") == Match::rejected);
    CHECK(run(g, "aabbbcdddxy") == Match::rejected);
    CHECK(accepts(R"(root ::= [0-9]? "x"* "y"+)", "xxy"));
    CHECK(accepts(R"(root ::= [0-9]? "x"* "y"+)", "7yy"));
    CHECK(run(R"(root ::= [0-9]? "x"* "y"+)", "77") == Match::rejected);
    CHECK(accepts("root ::= \"ab\"{0,3}", ""));
    CHECK(accepts("root ::= \"ab\"{0,3}", "ababab"));
    CHECK(run("root ::= \"ab\"{0,3}", "abababa") == Match::rejected);
}

TEST_CASE("gbnf: alternatives, groups, comments and newlines", "[grammar][gbnf]") {
    const char* g =
        "root ::= greeting ws name # comment\n"
        "\n"
        "greeting ::= \"hi\" |\n"
        "   \"hello\"\n"
        "name ::= (\n"
        "  \"bob\"   # in a group newlines are fine\n"
        "  | \"amy\" )\n"
        "ws ::= \" \"\r\n";
    CHECK(accepts(g, "hi bob"));
    CHECK(accepts(g, "hello amy"));
    CHECK(run(g, "hey") == Match::rejected);
    CHECK(accepts("root ::= \"a\" | ", ""));  // an empty alternative
}

TEST_CASE("gbnf: errors name the line and column", "[grammar][gbnf]") {
    CHECK_THAT(parse_error("root ::= \"a\"\nfoo ::= \"b\" ]"),
               Catch::Contains("line 2, column 13") && Catch::Contains("expected end of line"));
    CHECK_THAT(parse_error("root ::= bar"), Catch::Contains("line 1, column 10") &&
                                                 Catch::Contains("undefined rule 'bar'"));
    CHECK_THAT(parse_error("foo ::= \"x\""), Catch::Contains("no 'root' rule"));
    CHECK_THAT(parse_error("root ::= \"a\"\nroot ::= \"b\""), Catch::Contains("line 2, column 1") &&
                                                              Catch::Contains("defined twice"));
    CHECK_THAT(parse_error("root ::= \"abc"), Catch::Contains("unterminated string"));
    CHECK_THAT(parse_error("root ::= [abc"), Catch::Contains("unclosed '['"));
    CHECK_THAT(parse_error("root ::= (\"a\" "), Catch::Contains("unclosed '('"));
    CHECK_THAT(parse_error("root ::= \"\\q\""), Catch::Contains("unknown escape"));
    CHECK_THAT(parse_error("root ::= \"\\x4\""), Catch::Contains("hex digits"));
    CHECK_THAT(parse_error("root ::= \"\\U00110000\""), Catch::Contains("past U+10FFFF"));
    CHECK_THAT(parse_error("root ::= [z-a]"), Catch::Contains("end before its start"));
    CHECK_THAT(parse_error("root ::= []"), Catch::Contains("empty character class"));
    CHECK_THAT(parse_error("root ::= * \"a\""), Catch::Contains("without a preceding item"));
    CHECK_THAT(parse_error("root ::= \"a\"{3,2}"), Catch::Contains("n < m"));
    CHECK_THAT(parse_error("root ::= \"a\"{x}"), Catch::Contains("expected a repetition count"));
    CHECK_THAT(parse_error("root := \"a\""), Catch::Contains("expected '::='"));
    CHECK_THAT(parse_error("root ::= \"a\xFF\""), Catch::Contains("invalid UTF-8"));
    CHECK_THAT(parse_error(std::string("root ::= \"a\0\"", 13)), Catch::Contains("NUL byte"));
    CHECK_THAT(parse_error(""), Catch::Contains("empty grammar"));
    // Columns count characters, not bytes.
    CHECK_THAT(parse_error("root ::= \"é\" ]"), Catch::Contains("line 1, column 14"));
    CHECK_NOTHROW(ember::check_grammar(kJson));
    CHECK_THROWS_AS(ember::check_grammar("root ::= nothing"), ember::Error);
}

TEST_CASE("gbnf: left recursion is an error naming the cycle", "[grammar][gbnf]") {
    CHECK_THAT(parse_error("root ::= root \"a\" | \"b\""),
               Catch::Contains("left recursion: root -> root"));
    CHECK_THAT(parse_error("root ::= expr\nexpr ::= term \"+\" term\nterm ::= expr | \"1\""),
               Catch::Contains("left recursion") && Catch::Contains("expr -> term -> expr"));
    // Through a rule that can match nothing.
    CHECK_THAT(parse_error("root ::= opt root \"x\" | \"y\"\nopt ::= \"a\" | "),
               Catch::Contains("left recursion"));
    CHECK_THAT(parse_error("root ::= (\"\")* \"x\""), Catch::Contains("left recursion"));
    CHECK_THAT(parse_error("root ::= (\"a\"?)* \"x\""), Catch::Contains("left recursion"));
    // Right recursion is fine.
    CHECK(accepts("root ::= \"a\" root | \"b\"", "aaab"));
    CHECK(accepts("root ::= \"(\" root \")\" | \"x\"", "((x))"));
    CHECK(run("root ::= \"(\" root \")\" | \"x\"", "((x)") == Match::prefix);
}

TEST_CASE("gbnf: hostile grammars are errors, not hangs or stack overflows", "[grammar][gbnf][hostile]") {
    // Deep nesting: bounded before the recursive descent could overflow the stack.
    CHECK_THAT(parse_error("root ::= " + std::string(100000, '(') + "\"a\"" + std::string(100000, ')')),
               Catch::Contains("nested deeper than 200"));
    // Huge repetitions: bounded counts and a bounded expansion.
    CHECK_THAT(parse_error("root ::= \"a\"{1000000}"), Catch::Contains("larger than the limit"));
    std::string many = "root ::=";
    for (int i = 0; i < 6; ++i) many += " [a-z]{0,99999}";
    CHECK_THAT(parse_error(many), Catch::Contains("(limit"));
    many = "root ::=";
    for (int i = 0; i < 30; ++i) many += " \"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\"{99999}";
    CHECK_THAT(parse_error(many), Catch::Contains("elements (limit"));
    // Huge input.
    ember::grammar::Limits small;
    small.max_text_bytes = 1000;
    CHECK_THAT(parse_error("root ::= \"" + std::string(2000, 'a') + "\"", small),
               Catch::Contains("more than the limit"));
    // A long chain of rules, each the left edge of the next: checked without recursion.
    std::string chain = "root ::= r0\n";
    for (int i = 0; i < 20000; ++i) chain += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + "\n";
    const std::string ok_chain = chain + "r20000 ::= \"z\"\n";
    CHECK(accepts(ok_chain, "z"));
    CHECK_THAT(parse_error(chain + "r20000 ::= r0 \"z\"\n"), Catch::Contains("left recursion"));
    // Many nullable alternatives in a row: the expansion deduplicates instead of branching
    // 2^40 ways.
    std::string wide = "root ::=";
    for (int i = 0; i < 40; ++i) wide += " (\"\" | \"\")";
    wide += " \"x\"";
    CHECK(accepts(wide, "x"));
}

TEST_CASE("gbnf: to_gbnf prints the compiled rules", "[grammar][gbnf]") {
    const auto g = ember::grammar::parse_gbnf("root ::= \"ab\" [x-z\\n] item?\nitem ::= [^\"]");
    const std::string text = ember::grammar::to_gbnf(g);
    CHECK_THAT(text, Catch::Contains("root ::= \"ab\" [\\nx-z] root_"));
    CHECK_THAT(text, Catch::Contains("item ::= [\\x00-!#-\xF4\x8F\xBF\xBF]"));
}

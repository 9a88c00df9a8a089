// GBNF grammars: the parser, its printer and the checks (left recursion, undefined rules).
#include "ember/error.hpp"
#include "ember/grammar.hpp"
#include "fuzz_target.hpp"
#include "grammar/grammar.hpp"

EMBER_FUZZ_TARGET(gbnf) {
    const std::string_view text = ember_fuzz::as_text(data, size);
    try {
        (void)ember::grammar::to_gbnf(ember::grammar::parse_gbnf(text));
    } catch (const ember::Error&) {
    }
    try {
        ember::check_grammar(text);
    } catch (const ember::Error&) {
    }
}

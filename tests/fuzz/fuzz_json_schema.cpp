// JSON Schema to GBNF (response_format, tools), then the grammar check the sampler runs.
#include "ember/error.hpp"
#include "ember/grammar.hpp"
#include "fuzz_target.hpp"

EMBER_FUZZ_TARGET(json_schema) {
    try {
        ember::check_grammar(ember::json_schema_to_grammar(ember_fuzz::as_text(data, size)));
    } catch (const ember::Error&) {
    }
}

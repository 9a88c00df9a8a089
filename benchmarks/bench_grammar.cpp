// Grammar mask cost per generation step on real vocabularies (the shared vocab-only GGUFs:
// llama-spm 32k, llama-bpe 128k, qwen2 152k). A JSON document is "generated" under a grammar
// (a JSON Schema's, and llama.cpp's generic JSON grammar): at each step a mask is computed,
// then the longest allowed token that continues the document is accepted. Columns (microseconds
// per step, mean and 90th percentile): "cold": every state and transition forgotten before each
// mask (a grammar never seen); "new mask": masks uncached but transitions kept (a state not
// seen before in a warm matcher); "run": a normal generation (caches on); "naive": testing
// every token on its own from the state. CPU time of one thread.
//   bench_grammar [SHARED_DIR]
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/grammar.hpp"
#include "gguf/gguf_file.hpp"
#include "grammar/grammar.hpp"
#include "grammar/matcher.hpp"
#include "grammar/token_trie.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

const char* const kSchema = R"({"type": "object", "properties": {
  "name": {"type": "string"}, "age": {"type": "integer", "minimum": 0, "maximum": 150},
  "email": {"type": "string", "format": "uuid"},
  "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
  "address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
              "required": ["street", "city"]}},
  "required": ["name", "age", "tags", "address"]})";

const char* const kDocument =
    R"({"name": "Ada Lovelace, Countess of Lovelace", "age": 36, "tags": ["mathematician", "writer", )"
    R"("analytical engine", "poetical science"], "address": {"street": "12 St James's Square", "city": "London"}})";

const char* const kJsonGbnf = R"gbnf(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)gbnf";

enum class Mode { cold, new_mask, normal };

struct Run {
    int steps = 0;
    std::vector<double> cold_us;
    double warm_us = 0, accept_us = 0;
    std::uint64_t computed = 0, cached = 0;
};

// Generates kDocument under `g`: longest allowed token at each step.
Run run(const std::shared_ptr<const ember::grammar::Grammar>& g,
        const std::shared_ptr<const ember::grammar::TokenTrie>& trie,
        const std::unordered_map<std::string, ember::Token>& by_piece, Mode mode) {
    const bool cold = mode != Mode::normal;
    ember::grammar::Matcher m(g, trie);
    Run r;
    const std::string doc = kDocument;
    std::size_t at = 0;
    double mask_time = 0, accept_time = 0;
    while (at < doc.size()) {
        if (mode == Mode::cold) m.clear_states();
        if (mode == Mode::new_mask) m.clear_mask_cache();
        double t0 = cpu_seconds();
        const auto bits = m.mask();
        const double dt = cpu_seconds() - t0;
        mask_time += dt;
        if (cold) r.cold_us.push_back(dt * 1e6);
        ember::Token pick = -1;
        std::size_t len = 0;
        for (std::size_t n = std::min<std::size_t>(48, doc.size() - at); n > 0 && pick < 0; --n) {
            auto it = by_piece.find(doc.substr(at, n));
            if (it != by_piece.end() && ((bits[static_cast<std::size_t>(it->second) >> 6] >> (it->second & 63)) & 1u)) {
                pick = it->second;
                len = n;
            }
        }
        if (pick < 0) {
            std::fprintf(stderr, "bench_grammar: no allowed token at byte %zu\n", at);
            break;
        }
        t0 = cpu_seconds();
        m.accept(pick);
        accept_time += cpu_seconds() - t0;
        at += len;
        ++r.steps;
    }
    r.warm_us = mask_time * 1e6 / r.steps;
    r.accept_us = accept_time * 1e6 / r.steps;
    r.computed = m.masks_computed();
    r.cached = m.masks_cached();
    return r;
}

double naive_us(const std::shared_ptr<const ember::grammar::Grammar>& g,
                const std::shared_ptr<const ember::grammar::TokenTrie>& trie, int steps,
                const std::unordered_map<std::string, ember::Token>& by_piece) {
    ember::grammar::Matcher m(g, trie);
    const std::string doc = kDocument;
    double total = 0;
    for (int s = 0; s < steps; ++s) {
        const double t0 = cpu_seconds();
        std::size_t n_allowed = 0;
        for (ember::Token t = 0; t < static_cast<ember::Token>(trie->n_vocab); ++t) n_allowed += m.allows(t);
        total += cpu_seconds() - t0;
        m.accept(by_piece.at(doc.substr(static_cast<std::size_t>(s), 1)));
        (void)n_allowed;
    }
    return total * 1e6 / steps;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
    const std::string shared = argc > 1 ? argv[1] : "../shared";
    const auto schema_grammar = std::make_shared<const ember::grammar::Grammar>(
        ember::grammar::parse_gbnf(ember::json_schema_to_grammar(kSchema)));
    const auto json_grammar = std::make_shared<const ember::grammar::Grammar>(ember::grammar::parse_gbnf(kJsonGbnf));
    std::printf("%-10s %7s %8s %9s | %-11s %5s %9s %9s %9s %9s %9s %9s %6s %9s\n", "vocab", "tokens", "nodes",
                "build ms", "grammar", "steps", "cold", "cold p90", "new mask", "nm p90", "run", "accept",
                "hits", "naive");
    for (const char* name : {"llama-spm", "llama-bpe", "qwen2"}) {
        const std::string path = shared + "/tokenizer/ggml-vocab-" + name + ".gguf";
        std::unique_ptr<ember::tokenizer::Tokenizer> tok;
        try {
            tok = ember::tokenizer::Tokenizer::from_gguf(ember::gguf::File::open(path));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "bench_grammar: %s\n", e.what());
            continue;
        }
        double t0 = cpu_seconds();
        const auto trie = ember::grammar::build_token_trie(*tok);
        const double build_ms = (cpu_seconds() - t0) * 1e3;
        std::unordered_map<std::string, ember::Token> by_piece;
        for (ember::Token t = 0; t < static_cast<ember::Token>(trie->n_vocab); ++t) {
            const std::string piece(trie->piece(t));
            if (!piece.empty() && !trie->eog[static_cast<std::size_t>(t)]) by_piece.emplace(piece, t);
        }
        for (const auto& [gname, g] : {std::pair{"json-schema", schema_grammar}, std::pair{"json", json_grammar}}) {
            const Run cold = run(g, trie, by_piece, Mode::cold);
            const Run new_mask = run(g, trie, by_piece, Mode::new_mask);
            const Run warm = run(g, trie, by_piece, Mode::normal);
            const double naive = naive_us(g, trie, cold.steps, by_piece);
            auto mean = [](const std::vector<double>& v) {
                double sum = 0;
                for (double x : v) sum += x;
                return sum / static_cast<double>(v.size());
            };
            std::printf("%-10s %7zu %8zu %9.1f | %-11s %5d %7.0fus %7.0fus %7.0fus %7.0fus %7.0fus %7.1fus %5.0f%% %7.0fus\n",
                        name, trie->n_vocab, trie->n_nodes(), build_ms, gname, cold.steps, mean(cold.cold_us),
                        percentile(cold.cold_us, 0.9), mean(new_mask.cold_us), percentile(new_mask.cold_us, 0.9),
                        warm.warm_us, warm.accept_us,
                        100.0 * static_cast<double>(warm.cached) / static_cast<double>(warm.cached + warm.computed), naive);
        }
    }
    return 0;
}

#include "chat_options.hpp"

#include "cli/text_input.hpp"

#include "ember/decoding.hpp"
#include "ember/error.hpp"
#include "ember/grammar.hpp"

namespace ember_chat {
namespace {

using ember::cli::IntRange;
using ember::cli::RealRange;

// The documented range of every numeric flag (see usage_text()).
constexpr IntRange kPredictRange{-1, 1 << 24};
constexpr IntRange kTopKRange{0, 1 << 24};
constexpr IntRange kRepeatLastNRange{0, 1 << 20};
constexpr IntRange kDraftMaxRange{1, 64};
constexpr IntRange kLookupRange{1, 16};
constexpr IntRange kBeamsRange{1, ember::kMaxBeams};
constexpr IntRange kSamplesRange{1, ember::kMaxSamples};
constexpr RealRange kTempRange{0.0, 100.0};
constexpr RealRange kProbabilityRange{0.0, 1.0};
constexpr RealRange kRepeatPenaltyRange{0.0, 100.0, true};
constexpr RealRange kPenaltyRange{-100.0, 100.0};

// --beams and --samples answer one prompt (-p or -f) in one go: no interactive mode and no
// speculative decoding; beam search scores the model's own distribution, so it takes none of
// the sampling constraints either.
void check_strategy(const Options& o) {
    if (o.beams == 0 && o.samples == 0) return;
    const std::string flag = o.beams > 0 ? "--beams" : "--samples";
    if (o.beams > 0 && o.samples > 0) throw UsageError("--beams and --samples exclude each other");
    if (!o.has_prompt) throw UsageError(flag + " needs -p or -f (it has no interactive mode)");
    if (!o.draft.empty() || o.lookup > 0) throw UsageError(flag + " cannot be combined with --draft or --lookup");
    if (o.beams == 0) return;
    if (o.n_predict < 1) throw UsageError("--beams needs -n N with N >= 1 (the tokens to search)");
    if (!o.stop.empty()) throw UsageError("--beams cannot be combined with --stop");
    if (!o.sampler.grammar.empty() || !o.sampler.json_schema.empty()) {
        throw UsageError("--beams cannot be combined with --grammar, --json-schema or --json-object");
    }
}

// A grammar or schema that does not compile is a bad command line: say so before loading the
// model, naming the file.
void check_constraint(const Options& o) {
    if (!o.sampler.grammar.empty() && !o.sampler.json_schema.empty()) {
        throw UsageError("--grammar cannot be combined with --json-schema or --json-object");
    }
    try {
        if (!o.sampler.grammar.empty()) ember::check_grammar(o.sampler.grammar);
        if (!o.sampler.json_schema.empty()) ember::check_grammar(ember::json_schema_to_grammar(o.sampler.json_schema));
    } catch (const ember::Error& e) {
        throw UsageError(o.grammar_file + ": " + e.what());
    }
}

}  // namespace

const char* usage_text() {
    return "usage: ember-chat -m MODEL [-p PROMPT | -f FILE] [options]\n"
           "\n"
           "  -m, --model FILE        GGUF model to load (required)\n"
           "Without -p or -f: an interactive chat on stdin/stdout (type /help for commands).\n"
           "\n"
           "  -p, --prompt TEXT       one turn: answer TEXT (chat models) or continue it, then exit\n"
           "  -f, --file FILE         like -p, with the content of FILE (a regular file of at most\n"
           "                          64 MiB, or - for stdin)\n"
           "      --completion        continue the prompt as raw text, without the chat template\n"
           "                          (also the default for models that have no template)\n"
           "      --system TEXT       system message at the start of the conversation\n"
           "      --chat-template FILE  Jinja chat template to use instead of the model's (at most 1 MiB)\n"
           "  -n, --n-predict N       tokens to generate, -1..16777216 (default -1: until end of text)\n"
           "  -c, --ctx-size N        context length, 0..1048576 (default 0: the model's, at most 4096)\n"
           "  -t, --threads N         threads, 0..1024 (default 0: all)\n"
           "      --no-mmap           read the model into memory instead of mapping it (2 MiB pages\n"
           "                          where the system has them: faster decode of the types that are\n"
           "                          not repacked on some machines, at the cost of a slower load)\n"
           "      --mlock             lock the model's weights into RAM (RLIMIT_MEMLOCK permitting)\n"
           "      --kv-type T         KV cache type: f32 (default), f16, q8_0 (q8_0 needs a head\n"
           "                          dimension that is a multiple of 32)\n"
           "      --temp T            temperature, 0..100 (default 0.8; 0 = greedy)\n"
           "      --top-k N           top-k, 0..16777216 (default 40; 0 = off)\n"
           "      --top-p P           top-p, 0..1 (default 0.95; 1 = off)\n"
           "      --min-p P           min-p, 0..1 (default 0.05; 0 = off)\n"
           "      --typical P         locally typical sampling, 0..1 (default 1 = off)\n"
           "      --repeat-penalty F  repetition penalty, above 0 up to 100 (default 1 = off)\n"
           "      --repeat-last-n N   tokens the penalties look at, 0..1048576 (default 64)\n"
           "      --frequency-penalty F  -100..100 (default 0)\n"
           "      --presence-penalty F   -100..100 (default 0)\n"
           "      --seed N            RNG seed, 0..18446744073709551615 (default: random)\n"
           "      --stop TEXT         stop when the output contains TEXT (repeatable)\n"
           "      --grammar FILE      constrain each answer to a GBNF grammar (llama.cpp's format)\n"
           "      --json-schema FILE  constrain each answer to JSON matching a JSON Schema\n"
           "      --json-object       constrain each answer to a JSON object\n"
           "      --keep N            tokens of the prompt kept by --context-shift, 0..1048576 (default 0)\n"
           "      --context-shift     when the context is full, drop the oldest half and go on\n"
           "      --draft FILE        speculative decoding: a smaller GGUF model with the same\n"
           "                          vocabulary proposes tokens, the model checks them in one pass\n"
           "      --draft-max N       most tokens proposed per step, 1..64 (default 8; adaptive below)\n"
           "      --lookup N          speculative decoding by prompt lookup: guesses from earlier\n"
           "                          text matching the last 1..N tokens, N = 1..16 (no draft model)\n"
           "      --beams B           beam search with B beams, 1..256, over -n N tokens (required):\n"
           "                          prints the most likely text, its log-probability on stderr\n"
           "                          (sampling flags do not apply; needs -p or -f)\n"
           "      --samples N         N samples of the prompt, 1..256, decoded together: sample i is\n"
           "                          what --seed S+i alone prints; separated by a line ---\n"
           "      --quiet             no progress bar or timings on stderr\n"
           "  -h, --help              this text\n";
}

Options parse_options(int argc, char** argv) {
    using ember::cli::kContextRange;
    using ember::cli::kThreadRange;
    using ember::cli::read_text_input;
    Options o;
    auto& s = o.sampler;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-m", "--model")) o.model = args.value();
        else if (args.is("-p", "--prompt")) { o.prompt = args.value(); o.has_prompt = true; }
        else if (args.is("-f", "--file")) { o.prompt = read_text_input(args.value(), ember::cli::kPromptLimit, "prompt file"); o.has_prompt = true; }
        else if (args.is("--chat-template")) o.chat_template = read_text_input(args.value(), ember::cli::kTemplateLimit, "chat template");
        else if (args.is("--system")) o.system = args.value();
        else if (args.is("--completion")) o.completion = true;
        else if (args.is("--stop")) o.stop.push_back(args.value());
        else if (args.is("--grammar")) { o.grammar_file = args.value(); s.grammar = read_text_input(o.grammar_file, ember::cli::kTemplateLimit, "grammar file"); }
        else if (args.is("--json-schema")) { o.grammar_file = args.value(); s.json_schema = read_text_input(o.grammar_file, ember::cli::kJsonLimit, "JSON schema file"); }
        else if (args.is("--json-object")) { o.grammar_file = "--json-object"; s.json_schema = ember::kJsonObjectSchema; }
        else if (args.is("--keep")) o.keep = static_cast<int>(args.int_value(kContextRange));
        else if (args.is("--context-shift")) o.context_shift = true;
        else if (args.is("-n", "--n-predict")) o.n_predict = static_cast<int>(args.int_value(kPredictRange));
        else if (args.is("-c", "--ctx-size")) o.context = static_cast<int>(args.int_value(kContextRange));
        else if (args.is("-t", "--threads")) o.threads = static_cast<int>(args.int_value(kThreadRange));
        else if (args.is("--no-mmap")) o.use_mmap = false;
        else if (args.is("--mlock")) o.mlock = true;
        else if (args.is("--kv-type")) o.kv_type = args.kv_type_value();
        else if (args.is("--temp")) s.temperature = static_cast<float>(args.real_value(kTempRange));
        else if (args.is("--top-k")) s.top_k = static_cast<int>(args.int_value(kTopKRange));
        else if (args.is("--top-p")) s.top_p = static_cast<float>(args.real_value(kProbabilityRange));
        else if (args.is("--min-p")) s.min_p = static_cast<float>(args.real_value(kProbabilityRange));
        else if (args.is("--typical")) s.typical_p = static_cast<float>(args.real_value(kProbabilityRange));
        else if (args.is("--repeat-penalty")) s.repeat_penalty = static_cast<float>(args.real_value(kRepeatPenaltyRange));
        else if (args.is("--repeat-last-n")) s.penalty_last_n = static_cast<int>(args.int_value(kRepeatLastNRange));
        else if (args.is("--frequency-penalty")) s.frequency_penalty = static_cast<float>(args.real_value(kPenaltyRange));
        else if (args.is("--presence-penalty")) s.presence_penalty = static_cast<float>(args.real_value(kPenaltyRange));
        else if (args.is("--seed")) s.seed = args.u64_value();
        else if (args.is("--draft")) o.draft = args.value();
        else if (args.is("--draft-max")) o.draft_max = static_cast<int>(args.int_value(kDraftMaxRange));
        else if (args.is("--lookup")) o.lookup = static_cast<int>(args.int_value(kLookupRange));
        else if (args.is("--beams")) o.beams = static_cast<int>(args.int_value(kBeamsRange));
        else if (args.is("--samples")) o.samples = static_cast<int>(args.int_value(kSamplesRange));
        else if (args.is("--quiet")) o.quiet = true;
        else if (args.is("-h", "--help")) o.help = true;
        else args.unknown();
    }
    if (o.help) return o;
    if (o.model.empty()) throw UsageError("missing -m MODEL");
    if (!o.draft.empty() && o.lookup > 0) throw UsageError("--draft and --lookup exclude each other");
    for (const auto& stop : o.stop) {
        if (stop.empty()) throw UsageError("--stop needs a non-empty text");
    }
    check_constraint(o);
    check_strategy(o);
    return o;
}

}  // namespace ember_chat

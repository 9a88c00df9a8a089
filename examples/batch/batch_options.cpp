#include "batch_options.hpp"

#include "cli/args.hpp"
#include "cli/text_input.hpp"
#include "ember/error.hpp"

namespace ember_batch {

using ember::cli::ArgReader;
using ember::cli::IntRange;
using ember::cli::RealRange;
using ember::cli::UsageError;

const char* usage_text() {
    return "usage: ember-batch -m MODEL -f PROMPTS [options]\n"
           "Generates a continuation for every line of PROMPTS, at most --parallel at once in one\n"
           "batched forward pass (continuous batching: a new prompt joins as soon as one ends).\n"
           "Output is in input order: each prompt and its continuation on stdout.\n"
           "\n"
           "  -m, --model FILE     GGUF model (required)\n"
           "  -f, --file FILE      prompts, one per line, '-' for stdin, at most 64 MiB; empty\n"
           "                       lines are skipped (required)\n"
           "  -n, --n-predict N    tokens to generate per prompt (default 64; -1: until the end\n"
           "                       of text or of the context; at most 1048576)\n"
           "      --parallel N     prompts generated at once (default 4, 1..1024)\n"
           "  -c, --ctx-size N     tokens per prompt and continuation (default: the model's, at\n"
           "                       most 4096; 0..1048576)\n"
           "      --temp T         temperature (default 0.8, 0..100; 0 = greedy)\n"
           "      --seed S         RNG seed; prompt i uses S + i (default: random)\n"
           "  -t, --threads N      threads (default: all, 0..1024)\n"
           "      --json           one JSON object per line: {\"index\", \"prompt\", \"text\"\n"
           "                       (the continuation only), \"n_tokens\", \"ttft_ms\"}\n"
           "      --kv-type T      how the KV cache stores keys and values: f32 (default), f16,\n"
           "                       q8_0 (needs a head dimension that is a multiple of 32)\n"
           "      --kv-tokens N    KV cache pool shared by all prompts, in tokens (default:\n"
           "                       --parallel x context; 1..1073741824); prompts pause when full\n"
           "      --no-prefix-cache  do not reuse the KV blocks of prompts with the same start\n"
           "  -h, --help           this text\n"
           "A summary line (aggregate decode tokens/s, TTFT, prefix-cache hits, KV pool) goes to stderr.\n";
}

Options parse_options(int argc, char** argv) {
    Options o;
    ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-m", "--model")) o.model = args.value();
        else if (args.is("-f", "--file")) o.prompts_file = args.value();
        else if (args.is("-n", "--n-predict")) o.n_predict = static_cast<int>(args.int_value(IntRange{-1, 1 << 20}));
        else if (args.is("--parallel")) o.parallel = static_cast<int>(args.int_value(IntRange{1, 1024}));
        else if (args.is("-c", "--ctx-size")) o.context = static_cast<int>(args.int_value(ember::cli::kContextRange));
        else if (args.is("-t", "--threads")) o.threads = static_cast<int>(args.int_value(ember::cli::kThreadRange));
        else if (args.is("--temp")) o.temperature = static_cast<float>(args.real_value(RealRange{0.0, 100.0}));
        else if (args.is("--seed")) {
            o.seed = args.u64_value();
            o.has_seed = true;
        }
        else if (args.is("--json")) o.json = true;
        else if (args.is("--kv-type")) o.kv_type = args.kv_type_value();
        else if (args.is("--kv-tokens")) o.kv_tokens = args.int_value(ember::cli::kKvTokensRange);
        else if (args.is("--no-prefix-cache")) o.prefix_cache = false;
        else if (args.is("-h", "--help")) o.help = true;
        else args.unknown();
    }
    if (o.help) return o;
    if (o.model.empty()) throw UsageError("missing -m MODEL (see --help)");
    if (o.prompts_file.empty()) throw UsageError("missing -f PROMPTS (see --help)");
    return o;
}

std::vector<std::string> read_prompts(const std::string& path) {
    const std::string text = ember::cli::read_text_input(path, ember::cli::kPromptLimit, "prompt file");
    std::vector<std::string> prompts;
    std::size_t begin = 0;
    while (begin < text.size()) {
        std::size_t end = text.find('\n', begin);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(begin, end - begin);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) prompts.push_back(std::move(line));
        begin = end + 1;
    }
    if (prompts.empty()) throw ember::Error((path == "-" ? std::string("stdin") : path) + ": the prompt file holds no prompt");
    return prompts;
}

}  // namespace ember_batch

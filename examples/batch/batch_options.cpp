#include "batch_options.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "ember/error.hpp"

namespace ember_batch {
namespace {

template <class T>
T parse_number(const std::string& flag, const std::string& text, T min, T max) {
    T value{};
    const char* end = text.data() + text.size();
    const auto r = std::from_chars(text.data(), end, value);
    if (text.empty() || r.ec != std::errc() || r.ptr != end) {
        throw UsageError(flag + ": '" + text + "' is not a number");
    }
    if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(value)) throw UsageError(flag + ": '" + text + "' is not a finite number");
    }
    if (value < min || value > max) {
        std::ostringstream range;
        range << flag << ": " << text << " is out of range [" << min << ", " << max << "]";
        throw UsageError(range.str());
    }
    return value;
}

}  // namespace

const char* usage_text() {
    return "usage: ember-batch -m MODEL -f PROMPTS [options]\n"
           "Generates a continuation for every line of PROMPTS, at most --parallel at once in one\n"
           "batched forward pass (continuous batching: a new prompt joins as soon as one ends).\n"
           "Output is in input order: each prompt and its continuation on stdout.\n"
           "\n"
           "  -m, --model FILE     GGUF model (required)\n"
           "  -f, --file FILE      prompts, one per line; empty lines are skipped (required)\n"
           "  -n, --n-predict N    tokens to generate per prompt (default 64; -1: until the end\n"
           "                       of text or of the context)\n"
           "      --parallel N     prompts generated at once (default 4, 1..1024)\n"
           "  -c, --ctx-size N     tokens per prompt and continuation (default: the model's, at\n"
           "                       most 4096)\n"
           "      --temp T         temperature (default 0.8; 0 = greedy)\n"
           "      --seed S         RNG seed; prompt i uses S + i (default: random)\n"
           "  -t, --threads N      threads (default: all)\n"
           "      --json           one JSON object per line: {\"index\", \"prompt\", \"text\"\n"
           "                       (the continuation only), \"n_tokens\", \"ttft_ms\"}\n"
           "  -h, --help           this text\n"
           "A summary line (aggregate decode tokens/s, TTFT) goes to stderr.\n";
}

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw UsageError(flag + ": missing value");
            return argv[++i];
        };
        if (flag == "-m" || flag == "--model") o.model = value();
        else if (flag == "-f" || flag == "--file") o.prompts_file = value();
        else if (flag == "-n" || flag == "--n-predict") o.n_predict = parse_number<int>(flag, value(), -1, 1 << 20);
        else if (flag == "--parallel") o.parallel = parse_number<int>(flag, value(), 1, 1024);
        else if (flag == "-c" || flag == "--ctx-size") o.context = parse_number<int>(flag, value(), 0, 1 << 20);
        else if (flag == "-t" || flag == "--threads") o.threads = parse_number<int>(flag, value(), 0, 1024);
        else if (flag == "--temp") o.temperature = parse_number<float>(flag, value(), 0.0f, 100.0f);
        else if (flag == "--seed") {
            o.seed = parse_number<std::uint64_t>(flag, value(), 0, UINT64_MAX);
            o.has_seed = true;
        }
        else if (flag == "--json") o.json = true;
        else if (flag == "-h" || flag == "--help") o.help = true;
        else throw UsageError("unknown argument '" + flag + "' (see --help)");
    }
    if (o.help) return o;
    if (o.model.empty()) throw UsageError("missing -m MODEL (see --help)");
    if (o.prompts_file.empty()) throw UsageError("missing -f PROMPTS (see --help)");
    return o;
}

std::vector<std::string> read_prompts(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ember::Error(path + ": cannot read the prompt file");
    std::vector<std::string> prompts;
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) prompts.push_back(line);
    }
    if (in.bad()) throw ember::Error(path + ": cannot read the prompt file");
    if (prompts.empty()) throw ember::Error(path + ": the prompt file holds no prompt");
    return prompts;
}

}  // namespace ember_batch

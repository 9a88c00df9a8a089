#include "chat_options.hpp"

#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ember_chat {
namespace {

template <class T>
T parse_number(const std::string& flag, const std::string& text) {
    T value{};
    const char* end = text.data() + text.size();
    const auto r = std::from_chars(text.data(), end, value);
    if (text.empty() || r.ec != std::errc() || r.ptr != end) {
        throw UsageError("invalid value '" + text + "' for " + flag);
    }
    return value;
}

std::string read_file(const std::string& flag, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError("cannot read '" + path + "' for " + flag);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

const char* usage_text() {
    return "usage: ember-chat -m MODEL [-p PROMPT | -f FILE] [options]\n"
           "\n"
           "  -m, --model FILE        GGUF model to load (required)\n"
           "Without -p or -f: an interactive chat on stdin/stdout (type /help for commands).\n"
           "\n"
           "  -p, --prompt TEXT       one turn: answer TEXT (chat models) or continue it, then exit\n"
           "  -f, --file FILE         like -p, with the content of FILE\n"
           "      --completion        continue the prompt as raw text, without the chat template\n"
           "                          (also the default for models that have no template)\n"
           "      --system TEXT       system message at the start of the conversation\n"
           "      --chat-template FILE  Jinja chat template to use instead of the model's\n"
           "  -n, --n-predict N       tokens to generate (default -1: until end of text)\n"
           "  -c, --ctx-size N        context length (default: the model's, at most 4096)\n"
           "  -t, --threads N         threads (default: all)\n"
           "      --temp T            temperature (default 0.8; 0 = greedy)\n"
           "      --top-k N           top-k (default 40; 0 = off)\n"
           "      --top-p P           top-p (default 0.95; 1 = off)\n"
           "      --min-p P           min-p (default 0.05; 0 = off)\n"
           "      --typical P         locally typical sampling (default 1 = off)\n"
           "      --repeat-penalty F  repetition penalty (default 1 = off)\n"
           "      --repeat-last-n N   tokens the penalties look at (default 64)\n"
           "      --frequency-penalty F  (default 0)\n"
           "      --presence-penalty F   (default 0)\n"
           "      --seed N            RNG seed (default: random)\n"
           "      --stop TEXT         stop when the output contains TEXT (repeatable)\n"
           "      --keep N            tokens of the prompt kept by --context-shift (default 0)\n"
           "      --context-shift     when the context is full, drop the oldest half and go on\n"
           "      --quiet             no progress bar or timings on stderr\n"
           "  -h, --help              this text\n";
}

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw UsageError("missing value for " + flag);
            return argv[++i];
        };
        if (flag == "-m" || flag == "--model") o.model = value();
        else if (flag == "-p" || flag == "--prompt") { o.prompt = value(); o.has_prompt = true; }
        else if (flag == "-f" || flag == "--file") { o.prompt = read_file(flag, value()); o.has_prompt = true; }
        else if (flag == "--chat-template") o.chat_template = read_file(flag, value());
        else if (flag == "--system") o.system = value();
        else if (flag == "--completion") o.completion = true;
        else if (flag == "--stop") o.stop.push_back(value());
        else if (flag == "--keep") o.keep = parse_number<int>(flag, value());
        else if (flag == "--context-shift") o.context_shift = true;
        else if (flag == "-n" || flag == "--n-predict") o.n_predict = parse_number<int>(flag, value());
        else if (flag == "-c" || flag == "--ctx-size") o.context = parse_number<int>(flag, value());
        else if (flag == "-t" || flag == "--threads") o.threads = parse_number<int>(flag, value());
        else if (flag == "--temp") o.sampler.temperature = parse_number<float>(flag, value());
        else if (flag == "--top-k") o.sampler.top_k = parse_number<int>(flag, value());
        else if (flag == "--top-p") o.sampler.top_p = parse_number<float>(flag, value());
        else if (flag == "--min-p") o.sampler.min_p = parse_number<float>(flag, value());
        else if (flag == "--typical") o.sampler.typical_p = parse_number<float>(flag, value());
        else if (flag == "--repeat-penalty") o.sampler.repeat_penalty = parse_number<float>(flag, value());
        else if (flag == "--repeat-last-n") o.sampler.penalty_last_n = parse_number<int>(flag, value());
        else if (flag == "--frequency-penalty") o.sampler.frequency_penalty = parse_number<float>(flag, value());
        else if (flag == "--presence-penalty") o.sampler.presence_penalty = parse_number<float>(flag, value());
        else if (flag == "--seed") o.sampler.seed = parse_number<std::uint64_t>(flag, value());
        else if (flag == "--quiet") o.quiet = true;
        else if (flag == "-h" || flag == "--help") o.help = true;
        else throw UsageError("unknown flag '" + flag + "' (see --help)");
    }
    if (o.help) return o;
    if (o.model.empty()) throw UsageError("missing -m MODEL (see --help)");
    if (o.threads < 0) throw UsageError("-t must be >= 0");
    if (o.context < 0) throw UsageError("-c must be >= 0");
    if (o.keep < 0) throw UsageError("--keep must be >= 0");
    if (o.n_predict < -1) throw UsageError("-n must be >= -1");
    for (const auto& s : o.stop) {
        if (s.empty()) throw UsageError("--stop needs a non-empty text");
    }
    return o;
}

}  // namespace ember_chat

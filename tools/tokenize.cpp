// ember-tokenize: prints the tokens of a text for a GGUF model's vocabulary (the weights are not
// read). Usage:
//   ember-tokenize -m MODEL [-p TEXT | -f FILE] [--ids] [--no-bos] [--parse-special]
// Without --ids each token is printed on its own line as `id -> 'piece'` (control tokens shown
// as written, e.g. '<s>'); with --ids the ids are printed space-separated on one line.
// Exit status: 0 on success, 2 for bad arguments, 1 for a file that cannot be used.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>

#include "ember/error.hpp"
#include "gguf/gguf_file.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

constexpr const char* kUsage =
    "usage: ember-tokenize -m MODEL [-p TEXT | -f FILE] [--ids] [--no-bos] [--parse-special]\n"
    "  -m, --model FILE     GGUF model (only its tokenizer is loaded)\n"
    "  -p, --prompt TEXT    text to tokenize\n"
    "  -f, --file FILE      read the text from FILE\n"
    "      --ids            print the ids only, space-separated on one line\n"
    "      --no-bos         do not add BOS (and EOS) even where the model asks for them\n"
    "      --parse-special  match control tokens written in the text (e.g. <|im_start|>)\n";

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "ember-tokenize: error: %s (see --help)\n", message.c_str());
    std::exit(2);
}

struct Args {
    std::string model;
    std::optional<std::string> prompt;
    std::optional<std::string> file;
    bool ids_only = false;
    bool add_bos = true;
    bool parse_special = false;
};

Args parse_args(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error("option " + arg + " needs a value");
            return argv[++i];
        };
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (arg == "-m" || arg == "--model") {
            a.model = value();
        } else if (arg == "-p" || arg == "--prompt") {
            a.prompt = value();
        } else if (arg == "-f" || arg == "--file") {
            a.file = value();
        } else if (arg == "--ids") {
            a.ids_only = true;
        } else if (arg == "--no-bos") {
            a.add_bos = false;
        } else if (arg == "--parse-special") {
            a.parse_special = true;
        } else {
            usage_error("unknown argument '" + arg + "'");
        }
    }
    if (a.model.empty()) usage_error("no model given (-m MODEL)");
    if (a.prompt && a.file) usage_error("give either -p TEXT or -f FILE, not both");
    if (!a.prompt && !a.file) usage_error("no text given (-p TEXT or -f FILE)");
    return a;
}

}  // namespace

int main(int argc, char** argv) {
    const Args args = parse_args(argc, argv);
    std::string text;
    if (args.prompt) {
        text = *args.prompt;
    } else {
        std::ifstream in(*args.file, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "ember-tokenize: error: %s: cannot open the text file\n", args.file->c_str());
            return 1;
        }
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    try {
        const auto file = ember::gguf::File::open(args.model);
        const auto tok = ember::tokenizer::Tokenizer::from_gguf(file);
        const auto ids = tok->encode(text, args.add_bos, args.parse_special);
        std::string out;
        if (args.ids_only) {
            for (std::size_t i = 0; i < ids.size(); ++i) {
                if (i) out += ' ';
                out += std::to_string(ids[i]);
            }
            out += '\n';
        } else {
            for (const auto id : ids) {
                out += std::to_string(id) + " -> '" + tok->token_to_piece(id, true) + "'\n";
            }
        }
        std::fwrite(out.data(), 1, out.size(), stdout);
    } catch (const ember::Error& e) {
        std::fprintf(stderr, "ember-tokenize: error: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ember-tokenize: error: %s\n", e.what());
        return 1;
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
}

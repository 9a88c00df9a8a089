// ember-tokenize: prints the tokens of a text for a GGUF model's vocabulary (the weights are not
// read). Usage:
//   ember-tokenize -m MODEL [-p TEXT | -f FILE] [--ids] [--no-bos] [--parse-special]
// Without --ids each token is printed on its own line as `id -> 'piece'` (control tokens shown
// as written, e.g. '<s>'; control bytes and bytes that are not UTF-8 as \xNN); with --ids the
// ids are printed space-separated on one line.
// Exit status: 0 on success, 2 for bad arguments, 1 for a file that cannot be used.
#include <cstdio>
#include <optional>
#include <string>

#include "cli/args.hpp"
#include "cli/report.hpp"
#include "cli/text_input.hpp"
#include "ember/error.hpp"
#include "ember/text.hpp"
#include "gguf/gguf_file.hpp"
#include "runtime/fail.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

constexpr const char* kUsage =
    "usage: ember-tokenize -m MODEL [-p TEXT | -f FILE] [--ids] [--no-bos] [--parse-special]\n"
    "  -m, --model FILE     GGUF model (only its tokenizer is loaded)\n"
    "  -p, --prompt TEXT    text to tokenize\n"
    "  -f, --file FILE      read the text from FILE (a regular file of at most 64 MiB; - for stdin)\n"
    "      --ids            print the ids only, space-separated on one line\n"
    "      --no-bos         do not add BOS (and EOS) even where the model asks for them\n"
    "      --parse-special  match control tokens written in the text (e.g. <|im_start|>)\n";

struct Args {
    std::string model;
    std::optional<std::string> prompt;
    std::optional<std::string> file;
    bool ids_only = false;
    bool add_bos = true;
    bool parse_special = false;
    bool help = false;
};

Args parse_args(int argc, char** argv) {
    using ember::cli::UsageError;
    Args a;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-h", "--help")) a.help = true;
        else if (args.is("-m", "--model")) a.model = args.value();
        else if (args.is("-p", "--prompt")) a.prompt = args.value();
        else if (args.is("-f", "--file")) a.file = args.value();
        else if (args.is("--ids")) a.ids_only = true;
        else if (args.is("--no-bos")) a.add_bos = false;
        else if (args.is("--parse-special")) a.parse_special = true;
        else args.unknown();
    }
    if (a.help) return a;
    if (a.model.empty()) throw UsageError("no model given (-m MODEL)");
    if (a.prompt && a.file) throw UsageError("give either -p TEXT or -f FILE, not both");
    if (!a.prompt && !a.file) throw UsageError("no text given (-p TEXT or -f FILE)");
    return a;
}

int run(int argc, char** argv) {
    const Args args = parse_args(argc, argv);
    if (args.help) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    const std::string text =
        args.prompt ? *args.prompt : ember::cli::read_text_input(*args.file, ember::cli::kPromptLimit, "text file");
    const auto file = ember::gguf::File::open(args.model);
    std::unique_ptr<ember::tokenizer::Tokenizer> tok;
    try {
        tok = ember::tokenizer::Tokenizer::from_gguf(file);
    } catch (const ember::Error& e) {
        ember::fail_naming(args.model, e);
    }
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
            out += std::to_string(id) + " -> '" + ember::printable(tok->token_to_piece(id, true)) + "'\n";
        }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (std::fflush(stdout) != 0) throw ember::Error("stdout: write failed");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-tokenize", [&] { return run(argc, argv); });
}

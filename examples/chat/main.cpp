// ember-chat: chat with a GGUF model, or continue a prompt.
//
//   ember-chat -m MODEL                       interactive chat on stdin/stdout
//   ember-chat -m MODEL -p PROMPT [-n N]      one turn (raw completion with --completion or for
//                                             models without a chat template), then exit
//   ember-chat ... -p PROMPT -n N --beams B   that turn by beam search (strategies.cpp)
//   ember-chat ... -p PROMPT --samples N      N samples of it, seeds S..S+N-1
//
// Only the model's text goes to stdout (with -p in completion mode: the prompt, then the
// continuation); logs, the progress bar and metrics go to stderr. Exit codes: 0 success,
// 1 runtime error (bad model, prompt too long), 2 bad command line.
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>

#include <unistd.h>

#include "chat_options.hpp"
#include "cli/report.hpp"
#include "cli/text_input.hpp"
#include "conversation.hpp"
#include "strategies.hpp"
#include "ember/ember.hpp"
#include "terminal.hpp"

namespace ember_chat {
namespace {

constexpr const char* kReplHelp =
    "commands:\n"
    "  /reset        forget the conversation\n"
    "  /save FILE    save the conversation state to FILE\n"
    "  /load FILE    restore a state saved with /save\n"
    "  /stats        context use and speed so far\n"
    "  /help         this text\n"
    "  /exit         quit (also end of input, Ctrl-D)\n"
    "Ctrl-C stops the current answer.\n";

void report_answer(const Options& opt, const Answer& a) {
    if (a.interrupted) std::fputs("\n[interrupted]", stderr);
    if (a.status == ember::Status::context_full) std::fputs("\n[context full]", stderr);
    if (!opt.quiet) std::fprintf(stderr, "\n%s\n", Conversation::metrics_line(a).c_str());
    else if (a.interrupted || a.status == ember::Status::context_full) std::fputs("\n", stderr);
}

void report_error(const std::string& message) { ember::cli::print_error("ember-chat", message); }

// Handles a /command; returns false for /exit. Errors are reported and the REPL goes on.
bool run_command(const std::string& line, Conversation& chat) {
    const auto space = line.find(' ');
    const std::string cmd = line.substr(0, space);
    const std::string arg = space == std::string::npos ? "" : line.substr(space + 1);
    if (cmd == "/exit" || cmd == "/quit") return false;
    if (cmd == "/reset") {
        chat.reset();
        std::fputs("[conversation reset]\n", stderr);
    } else if (cmd == "/stats") {
        std::printf("%s\n", chat.stats().c_str());
    } else if (cmd == "/help") {
        std::fputs(kReplHelp, stdout);
    } else if (cmd == "/save" || cmd == "/load") {
        if (arg.empty()) {
            report_error(cmd + " needs a file name");
        } else {
            try {
                if (cmd == "/save") save_conversation(chat, arg);
                else load_conversation(chat, arg);
                std::fprintf(stderr, "[%s %s]\n", cmd == "/save" ? "saved to" : "loaded", ember::printable(arg).c_str());
            } catch (const std::exception& e) {
                report_error(e.what());
            }
        }
    } else {
        report_error("unknown command " + cmd + " (try /help)");
    }
    std::fflush(stdout);
    return true;
}

int repl(const Options& opt, Conversation& chat) {
    const Palette colour = Palette::detect();
    if (!opt.quiet) std::fputs("ember-chat: type a message, /help for commands.\n", stderr);
    ember::cli::LineReader input(STDIN_FILENO);
    std::string line;
    while (true) {
        std::printf("%s> %s", colour.prompt, colour.reset);
        std::fflush(stdout);
        const auto status = input.next(line);
        if (status == ember::cli::LineReader::Status::end) break;
        if (status == ember::cli::LineReader::Status::not_text) {
            report_error("stdin: no line end within 64 MiB: not text input");
            return 1;
        }
        if (status == ember::cli::LineReader::Status::too_long) {
            report_error("stdin: line longer than " + ember::cli::format_bytes(ember::cli::kReplLineLimit) + " skipped");
            continue;
        }
        if (line.empty()) continue;
        if (line[0] == '/') {
            if (!run_command(line, chat)) break;
            continue;
        }
        try {
            const Answer a = chat.user_turn(line, stdout);
            std::fputs("\n", stdout);
            report_answer(opt, a);
        } catch (const std::exception& e) {
            std::fputs("\n", stdout);
            report_error(e.what());
        }
    }
    std::fputs("\n", stdout);
    return 0;
}

int run(const Options& opt) {
    ProgressBar bar(!opt.quiet);
    ember::ModelOptions model_options;
    model_options.threads = opt.threads;
    model_options.use_mmap = opt.use_mmap;
    model_options.mlock = opt.mlock;
    model_options.on_progress = [&bar](float f) { bar.update(f); };
    const ember::Model model = ember::Model::load(opt.model, model_options);
    bar.finish();

    // Speculative decoding: a draft model (--draft) or prompt lookup (--lookup).
    std::optional<ember::Speculator> speculator;
    if (!opt.draft.empty() || opt.lookup > 0) {
        ember::SpeculativeOptions so;
        so.max_draft = opt.draft_max;
        so.lookup_ngram = opt.lookup;
        std::optional<ember::Model> draft;
        if (!opt.draft.empty()) {
            ProgressBar draft_bar(!opt.quiet);
            model_options.on_progress = [&draft_bar](float f) { draft_bar.update(f); };
            draft.emplace(ember::Model::load(opt.draft, model_options));
            draft_bar.finish();
            so.draft = &*draft;
        }
        speculator.emplace(model, so);  // checks the draft's vocabulary
    }

    Conversation chat(model, opt, speculator ? &*speculator : nullptr);
    install_interrupt_handler();
    const bool completion = opt.completion || (!model.has_chat_template() && opt.chat_template.empty());
    if (!opt.has_prompt) {
        if (completion && !opt.completion && !opt.quiet) {
            std::fputs("ember-chat: the model has no chat template; using ChatML\n", stderr);
        }
        return repl(opt, chat);
    }
    if (opt.beams > 0) return run_beams(opt, chat, completion);
    if (opt.samples > 0) return run_samples(opt, model, chat, completion);
    Answer a;
    if (completion) {
        std::fwrite(opt.prompt.data(), 1, opt.prompt.size(), stdout);
        std::fflush(stdout);
        a = chat.complete(opt.prompt, stdout);
    } else {
        a = chat.user_turn(opt.prompt, stdout);
    }
    std::fputs("\n", stdout);
    std::fflush(stdout);
    report_answer(opt, a);
    return 0;
}

}  // namespace
}  // namespace ember_chat

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-chat", [&] {
        const ember_chat::Options opt = ember_chat::parse_options(argc, argv);
        if (opt.help) {
            std::fputs(ember_chat::usage_text(), stdout);
            return 0;
        }
        return ember_chat::run(opt);
    });
}

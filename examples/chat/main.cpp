// ember-chat: chat with a GGUF model, or continue a prompt.
//
//   ember-chat -m MODEL                       interactive chat on stdin/stdout
//   ember-chat -m MODEL -p PROMPT [-n N]      one turn (raw completion with --completion or for
//                                             models without a chat template), then exit
//
// Only the model's text goes to stdout (with -p in completion mode: the prompt, then the
// continuation); logs, the progress bar and metrics go to stderr. Exit codes: 0 success,
// 1 runtime error (bad model, prompt too long), 2 bad command line.
#include <cstdio>
#include <iostream>
#include <string>

#include "chat_options.hpp"
#include "conversation.hpp"
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

// Handles a /command; returns false for /exit.
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
            std::fprintf(stderr, "%s needs a file name\n", cmd.c_str());
        } else {
            try {
                if (cmd == "/save") save_conversation(chat, arg);
                else load_conversation(chat, arg);
                std::fprintf(stderr, "[%s %s]\n", cmd == "/save" ? "saved to" : "loaded", arg.c_str());
            } catch (const ember::Error& e) {
                std::fprintf(stderr, "error: %s\n", e.what());
            }
        }
    } else {
        std::fprintf(stderr, "unknown command %s (try /help)\n", cmd.c_str());
    }
    std::fflush(stdout);
    return true;
}

int repl(const Options& opt, Conversation& chat) {
    const Palette colour = Palette::detect();
    if (!opt.quiet) std::fputs("ember-chat: type a message, /help for commands.\n", stderr);
    std::string line;
    while (true) {
        std::printf("%s> %s", colour.prompt, colour.reset);
        std::fflush(stdout);
        if (!std::getline(std::cin, line)) break;  // EOF
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        if (line[0] == '/') {
            if (!run_command(line, chat)) break;
            continue;
        }
        try {
            const Answer a = chat.user_turn(line, stdout);
            std::fputs("\n", stdout);
            report_answer(opt, a);
        } catch (const ember::Error& e) {
            std::fprintf(stderr, "\nerror: %s\n", e.what());
        }
    }
    std::fputs("\n", stdout);
    return 0;
}

int run(const Options& opt) {
    ProgressBar bar(!opt.quiet);
    ember::ModelOptions model_options;
    model_options.threads = opt.threads;
    model_options.on_progress = [&bar](float f) { bar.update(f); };
    const ember::Model model = ember::Model::load(opt.model, model_options);
    bar.finish();

    Conversation chat(model, opt);
    install_interrupt_handler();
    const bool completion = opt.completion || !model.has_chat_template() && opt.chat_template.empty();
    if (!opt.has_prompt) {
        if (completion && !opt.completion && !opt.quiet) {
            std::fputs("ember-chat: the model has no chat template; using ChatML\n", stderr);
        }
        return repl(opt, chat);
    }
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
    ember_chat::Options opt;
    try {
        opt = ember_chat::parse_options(argc, argv);
    } catch (const ember_chat::UsageError& e) {
        std::fprintf(stderr, "ember-chat: %s\n", e.what());
        return 2;
    }
    if (opt.help) {
        std::fputs(ember_chat::usage_text(), stdout);
        return 0;
    }
    try {
        return ember_chat::run(opt);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ember-chat: error: %s\n", e.what());
        return 1;
    }
}

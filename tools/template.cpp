// ember-template: renders a chat template with a conversation and prints exactly the result.
//
//   ember-template --template FILE.jinja --messages MESSAGES.json [--bos S] [--eos S]
//                  [--add-generation-prompt] [--date TEXT] [--vars VARS.json]
//
// MESSAGES.json is a JSON array of messages ({"role": ..., "content": ..., ...}). VARS.json is
// an optional object of extra template variables (tools, documents, enable_thinking, ...).
// --date makes strftime_now(fmt) return TEXT verbatim.
// Exit status: 0 on success, 1 for a template error, 2 for bad usage or unreadable input.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "chat/chat_template.hpp"
#include "ember/error.hpp"

namespace {

constexpr const char* kUsage =
    "usage: ember-template --template FILE.jinja --messages MESSAGES.json [--bos S] [--eos S] "
    "[--add-generation-prompt] [--date TEXT] [--vars VARS.json]";

struct UsageError {
    std::string message;
};

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError{"cannot open '" + path + "'"};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    std::string template_path, messages_path, vars_path;
    ember::chat::ChatTemplateInput input;
    try {
        for (int i = 1; i < argc; ++i) {
            std::string arg = argv[i];
            auto value = [&]() -> std::string {
                if (i + 1 >= argc) throw UsageError{"missing value after " + arg};
                return argv[++i];
            };
            if (arg == "--template") template_path = value();
            else if (arg == "--messages") messages_path = value();
            else if (arg == "--bos") input.bos_token = value();
            else if (arg == "--eos") input.eos_token = value();
            else if (arg == "--add-generation-prompt") input.add_generation_prompt = true;
            else if (arg == "--date") input.fixed_date = value();
            else if (arg == "--vars") vars_path = value();
            else if (arg == "--help" || arg == "-h") {
                std::cout << kUsage << "\n";
                return 0;
            } else {
                throw UsageError{"unknown argument '" + arg + "'"};
            }
        }
        if (template_path.empty() || messages_path.empty()) throw UsageError{"--template and --messages are required"};
        std::string source = read_file(template_path);
        try {
            input.messages = ember::json::parse(read_file(messages_path));
            if (input.messages.is_object() && input.messages.find("messages"))
                input.messages = *input.messages.find("messages");
            if (!input.messages.is_array()) throw UsageError{messages_path + ": expected a JSON array of messages"};
            if (!vars_path.empty()) {
                input.extra = ember::json::parse(read_file(vars_path));
                if (!input.extra.is_object()) throw UsageError{vars_path + ": expected a JSON object"};
            }
        } catch (const ember::Error& e) {
            throw UsageError{e.what()};
        }
        std::string out = ember::chat::ChatTemplate(source).render(input);
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
        return 0;
    } catch (const UsageError& e) {
        std::cerr << "ember-template: " << one_line(e.message) << " (--help for usage)\n";
        return 2;
    } catch (const ember::Error& e) {
        std::cerr << "ember-template: " << one_line(e.what()) << "\n";
        return 1;
    }
}

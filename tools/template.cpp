// ember-template: renders a chat template with a conversation and prints exactly the result.
//
//   ember-template --template FILE.jinja --messages MESSAGES.json [--bos S] [--eos S]
//                  [--add-generation-prompt] [--date TEXT] [--vars VARS.json]
//
// MESSAGES.json is a JSON array of messages ({"role": ..., "content": ..., ...}). VARS.json is
// an optional object of extra template variables (tools, documents, enable_thinking, ...).
// --date makes strftime_now(fmt) return TEXT verbatim. Inputs are regular files (templates at
// most 1 MiB, JSON at most 64 MiB).
// Exit status: 0 on success, 1 for a template error or an input file that cannot be used,
// 2 for bad usage.
#include <cstdio>
#include <string>

#include "chat/chat_template.hpp"
#include "cli/args.hpp"
#include "cli/report.hpp"
#include "cli/text_input.hpp"
#include "ember/error.hpp"
#include "runtime/fail.hpp"

namespace {

constexpr const char* kUsage =
    "usage: ember-template --template FILE.jinja --messages MESSAGES.json [--bos S] [--eos S] "
    "[--add-generation-prompt] [--date TEXT] [--vars VARS.json]\n";

ember::json::Value read_json(const std::string& path) {
    const std::string text = ember::cli::read_text_input(path, ember::cli::kJsonLimit, "JSON file");
    try {
        return ember::json::parse(text);
    } catch (const ember::Error& e) {
        ember::fail_naming(path, e);
    }
}

int run(int argc, char** argv) {
    using ember::cli::UsageError;
    std::string template_path, messages_path, vars_path;
    ember::chat::ChatTemplateInput input;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("--template")) template_path = args.value();
        else if (args.is("--messages")) messages_path = args.value();
        else if (args.is("--bos")) input.bos_token = args.value();
        else if (args.is("--eos")) input.eos_token = args.value();
        else if (args.is("--add-generation-prompt")) input.add_generation_prompt = true;
        else if (args.is("--date")) input.fixed_date = args.value();
        else if (args.is("--vars")) vars_path = args.value();
        else if (args.is("-h", "--help")) {
            std::fputs(kUsage, stdout);
            return 0;
        } else {
            args.unknown();
        }
    }
    if (template_path.empty() || messages_path.empty()) throw UsageError("--template and --messages are required");
    const std::string source = ember::cli::read_text_input(template_path, ember::cli::kTemplateLimit, "template");
    input.messages = read_json(messages_path);
    if (input.messages.is_object() && input.messages.contains("messages")) {
        ember::json::Value inner = std::move(input.messages["messages"]);
        input.messages = std::move(inner);
    }
    if (!input.messages.is_array()) throw ember::Error(messages_path + ": expected a JSON array of messages");
    if (!vars_path.empty()) {
        input.extra = read_json(vars_path);
        if (!input.extra.is_object()) throw ember::Error(vars_path + ": expected a JSON object");
    }
    std::string out;
    try {
        out = ember::chat::ChatTemplate(source).render(input);
    } catch (const ember::Error& e) {
        ember::fail_naming(template_path, e);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (std::fflush(stdout) != 0) throw ember::Error("stdout: write failed");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-template", [&] { return run(argc, argv); });
}

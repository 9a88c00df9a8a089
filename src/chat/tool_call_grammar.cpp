// tool_call_grammar (ember/tool_calls.hpp): a GBNF grammar for replies that are tool calls. Each
// function's `parameters` schema is converted on its own and its rules renamed with a prefix
// of their own ("f0-", "f1-", ...), so that the functions' rules never collide; the format's
// markup around them is written here.
#include <string>
#include <vector>

#include "chat/json.hpp"
#include "ember/grammar.hpp"
#include "ember/tool_calls.hpp"
#include "grammar/json_schema_parts.hpp"
#include "runtime/fail.hpp"

namespace ember {
namespace {

bool is_word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

// `gbnf` with every rule name (definitions and references) prefixed: literals, character
// classes, comments and repetition counts ({2,5}) are left as they are.
std::string prefix_rules(std::string_view gbnf, const std::string& prefix) {
    std::string out;
    out.reserve(gbnf.size() * 2);
    for (std::size_t i = 0; i < gbnf.size();) {
        const char c = gbnf[i];
        if (c == '"' || c == '[') {  // a literal or a class, escapes inside
            const char close = c == '"' ? '"' : ']';
            std::size_t j = i + 1;
            while (j < gbnf.size() && gbnf[j] != close) j += gbnf[j] == '\\' ? 2 : 1;
            j = std::min(j + 1, gbnf.size());
            out.append(gbnf.substr(i, j - i));
            i = j;
        } else if (c == '#') {
            const std::size_t j = std::min(gbnf.find('\n', i), gbnf.size());
            out.append(gbnf.substr(i, j - i));
            i = j;
        } else if (is_word_char(c)) {
            std::size_t j = i;
            bool digits = true;
            for (; j < gbnf.size() && is_word_char(gbnf[j]); ++j) digits = digits && gbnf[j] >= '0' && gbnf[j] <= '9';
            if (!digits) out += prefix;
            out.append(gbnf.substr(i, j - i));
            i = j;
        } else {
            out += c;
            ++i;
        }
    }
    return out;
}

struct Function {
    std::string name;
    std::string schema;  // the parameters, as JSON text
};

std::vector<Function> functions_of(std::string_view tools_text) {
    json::Value tools;
    try {
        tools = json::parse(tools_text);
    } catch (const Error& e) {
        fail(std::string("tool_call_grammar: tools: ") + e.what());
    }
    if (!tools.is_array() || tools.empty()) fail("tool_call_grammar: tools must be a non-empty JSON array");
    std::vector<Function> out;
    for (std::size_t i = 0; i < tools.size(); ++i) {
        const std::string at = "tool_call_grammar: tools[" + std::to_string(i) + "]";
        const json::Value& tool = tools[i];
        const auto fn = tool.is_object() ? tool.find("function") : tool.end();
        if (!tool.is_object() || fn == tool.end() || !fn->is_object()) fail(at + " has no \"function\" object");
        const auto name = fn->find("name");
        if (name == fn->end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
            fail(at + ".function.name must be a non-empty string");
        }
        const auto params = fn->find("parameters");
        const bool has_params = params != fn->end() && !params->is_null();
        if (has_params && !params->is_object()) fail(at + ".function.parameters must be a JSON Schema object");
        // No parameters: the function takes none, {} (OpenAI's reading).
        const std::string none = R"({"type": "object", "properties": {}})";
        out.push_back({name->get<std::string>(), has_params ? json::dump(*params) : none});
    }
    return out;
}

// The JSON object of one call: {"name": "NAME", "<key>": ARGS}.
std::string call_object(const std::string& name, const char* args_key, const std::string& args_rule) {
    std::string head = "{\"name\": ";
    json::append_quoted(head, name);
    head += std::string(", \"") + args_key + "\": ";
    return grammar::gbnf_literal(head) + " " + args_rule + " \"}\"";
}

}  // namespace

std::string tool_call_grammar(std::string_view tools, ToolCallFormat format, const ToolCallGrammarOptions& options) {
    const std::vector<Function> functions = functions_of(tools);
    std::string rules;
    std::string alternatives;
    for (std::size_t i = 0; i < functions.size(); ++i) {
        const Function& f = functions[i];
        if (!options.function.empty() && f.name != options.function) continue;
        const std::string prefix = std::string("f").append(std::to_string(i)).append("-");
        try {
            rules += prefix_rules(json_schema_to_grammar(f.schema), prefix);
        } catch (const Error& e) {
            fail("tool_call_grammar: the parameters of function '" + f.name + "': " + e.what());
        }
        const std::string args = prefix + "root";
        std::string call;
        switch (format) {
            case ToolCallFormat::llama3: call = call_object(f.name, "parameters", args); break;
            case ToolCallFormat::mistral_args:
                call = grammar::gbnf_literal("[TOOL_CALLS]" + f.name + "[ARGS]") + " " + args;
                break;
            default: call = call_object(f.name, "arguments", args);
        }
        rules += prefix + "call ::= " + call + "\n";
        alternatives += (alternatives.empty() ? "" : " | ") + prefix + "call";
    }
    if (alternatives.empty()) fail("tool_call_grammar: no function named '" + options.function + "' among the tools");

    // The calls: one, or with `parallel` one or more, in the format's markup.
    std::string root;
    switch (format) {
        case ToolCallFormat::hermes:
            rules += "tool-call ::= \"<tool_call>\\n\" (" + alternatives + ") \"\\n</tool_call>\"\n";
            root = options.parallel ? "tool-call (\"\\n\" tool-call)*" : "tool-call";
            break;
        case ToolCallFormat::llama3:
            rules += "tool-call ::= " + alternatives + "\n";
            root = options.parallel ? "tool-call (\"; \" tool-call)*" : "tool-call";
            break;
        case ToolCallFormat::mistral:
            rules += "tool-call ::= " + alternatives + "\n";
            root = options.parallel ? "\"[TOOL_CALLS][\" tool-call (\", \" tool-call)* \"]\""
                                    : "\"[TOOL_CALLS][\" tool-call \"]\"";
            break;
        case ToolCallFormat::mistral_args:
            rules += "tool-call ::= " + alternatives + "\n";
            root = options.parallel ? "tool-call+" : "tool-call";
            break;
    }
    return "root ::= " + root + "\n" + rules;
}

}  // namespace ember

// Tool calls out of a model's reply (ember/tool_calls.hpp): the format from the chat template,
// and a parser per format. Parsing never throws: what is not a well-formed call stays text.
#include "ember/tool_calls.hpp"

#include <algorithm>
#include <exception>
#include <random>

#include "chat/json.hpp"

namespace ember {
namespace {

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kToolCalls = "[TOOL_CALLS]";
constexpr std::string_view kArgs = "[ARGS]";
constexpr std::string_view kCallId = "[CALL_ID]";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_alnum(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::size_t skip_space(std::string_view s, std::size_t i) {
    while (i < s.size() && is_space(s[i])) ++i;
    return i;
}

std::string_view trim(std::string_view s) {
    const std::size_t b = skip_space(s, 0);
    std::size_t e = s.size();
    while (e > b && is_space(s[e - 1])) --e;
    return s.substr(b, e - b);
}

// The JSON value of `text`, or a discarded (null-like) value when it does not parse.
json::Value parse_or_discarded(std::string_view text) {
    try {
        return json::parse(text);
    } catch (const std::exception&) {
        return json::Value(json::Value::value_t::discarded);
    }
}

std::string random_alnum(std::size_t n) {
    static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    thread_local std::mt19937_64 rng{std::random_device{}()};
    std::uniform_int_distribution<std::size_t> pick(0, sizeof kChars - 2);
    std::string out(n, 'x');
    for (char& c : out) c = kChars[pick(rng)];
    return out;
}

bool is_mistral(ToolCallFormat f) { return f == ToolCallFormat::mistral || f == ToolCallFormat::mistral_args; }

std::string new_id(ToolCallFormat format) {
    return is_mistral(format) ? random_alnum(9) : "call_" + random_alnum(24);
}

// {"name": ..., "arguments" | "parameters": {...} | "<JSON object text>", "id"?} as a call;
// false when it is not one (a JSON object without arguments, like {"name": "Bob"}, is none).
bool to_call(const json::Value& v, ToolCallFormat format, ToolCall& call) {
    if (!v.is_object()) return false;
    const auto name = v.find("name");
    if (name == v.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) return false;
    auto args = v.find("arguments");
    if (args == v.end()) args = v.find("parameters");
    if (args == v.end()) return false;
    const json::Value arguments = args->is_string() ? parse_or_discarded(args->get_ref<const std::string&>()) : *args;
    if (!arguments.is_object()) return false;
    call.name = name->get<std::string>();
    call.arguments = json::dump(arguments);
    const auto id = v.find("id");
    const bool keep_id = id != v.end() && id->is_string() && !id->get_ref<const std::string&>().empty();
    call.id = keep_id ? id->get<std::string>() : new_id(format);
    return true;
}

bool to_call(std::string_view text, ToolCallFormat format, ToolCall& call) {
    return to_call(parse_or_discarded(text), format, call);
}

ParsedReply finish(std::string content, std::vector<ToolCall> calls) {
    ParsedReply r;
    r.content = calls.empty() ? std::move(content) : std::string(trim(content));
    r.tool_calls = std::move(calls);
    return r;
}

// <tool_call> JSON </tool_call>, anywhere in the text; the closing tag may be missing.
ParsedReply parse_hermes(std::string_view text) {
    std::string content;
    std::vector<ToolCall> calls;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t at = text.find(kHermesOpen, pos);
        if (at == std::string_view::npos) break;
        content.append(text.substr(pos, at - pos));
        const std::size_t body = skip_space(text, at + kHermesOpen.size());
        const bool object = body < text.size() && text[body] == '{';
        const std::size_t end = object ? json::bracket_end(text, body) : std::string_view::npos;
        ToolCall call;
        if (end == std::string_view::npos || !to_call(text.substr(body, end - body), ToolCallFormat::hermes, call)) {
            content.append(kHermesOpen);  // not a call: its text stays
            pos = at + kHermesOpen.size();
            continue;
        }
        calls.push_back(std::move(call));
        const std::size_t close = skip_space(text, end);
        pos = text.substr(close).starts_with(kHermesClose) ? close + kHermesClose.size() : end;
    }
    if (pos < text.size()) content.append(text.substr(pos));
    return finish(std::move(content), std::move(calls));
}

// Calls written back to back from `pos` to the end of `text`, each a JSON object, separated by
// `separator` (and whitespace); empty when anything else is there.
std::vector<ToolCall> json_calls(std::string_view text, std::size_t pos, char separator, ToolCallFormat format) {
    std::vector<ToolCall> calls;
    for (pos = skip_space(text, pos); pos < text.size();) {
        if (text[pos] != '{') return {};
        const std::size_t end = json::bracket_end(text, pos);
        ToolCall call;
        if (end == std::string_view::npos || !to_call(text.substr(pos, end - pos), format, call)) return {};
        calls.push_back(std::move(call));
        pos = skip_space(text, end);
        if (pos < text.size() && text[pos] == separator) pos = skip_space(text, pos + 1);
    }
    return calls;
}

// [<|python_tag|>] {"name", "parameters"} [; {...}]..., the whole reply.
ParsedReply parse_llama3(std::string_view text) {
    const std::size_t tag = text.find(kPythonTag);
    const std::size_t start = tag == std::string_view::npos ? 0 : tag + kPythonTag.size();
    std::vector<ToolCall> calls = json_calls(text, start, ';', ToolCallFormat::llama3);
    if (calls.empty()) return finish(std::string(text), {});
    return finish(std::string(text.substr(0, tag == std::string_view::npos ? 0 : tag)), std::move(calls));
}

// After [TOOL_CALLS] at `pos`: a JSON array of calls, or name[CALL_ID]id[ARGS]{...}. Returns
// where the calls end, or npos when they are malformed.
std::size_t mistral_block(std::string_view text, std::size_t pos, ToolCallFormat format, std::vector<ToolCall>& out) {
    pos = skip_space(text, pos);
    if (pos < text.size() && text[pos] == '[') {
        const std::size_t end = json::bracket_end(text, pos);
        if (end == std::string_view::npos) return end;
        const json::Value list = parse_or_discarded(text.substr(pos, end - pos));
        if (!list.is_array() || list.empty()) return std::string_view::npos;
        for (const json::Value& v : list) {
            ToolCall call;
            if (!to_call(v, format, call)) return std::string_view::npos;
            out.push_back(std::move(call));
        }
        return end;
    }
    std::size_t name_end = pos;
    while (name_end < text.size() && (is_alnum(text[name_end]) || text[name_end] == '_' || text[name_end] == '-' ||
                                      text[name_end] == '.')) {
        ++name_end;
    }
    if (name_end == pos) return std::string_view::npos;
    ToolCall call;
    call.name = std::string(text.substr(pos, name_end - pos));
    std::size_t at = name_end;
    if (text.substr(at).starts_with(kCallId)) {
        at += kCallId.size();
        const std::size_t id_start = at;
        while (at < text.size() && is_alnum(text[at])) ++at;
        call.id = std::string(text.substr(id_start, at - id_start));
    }
    if (!text.substr(at).starts_with(kArgs)) return std::string_view::npos;
    at = skip_space(text, at + kArgs.size());
    if (at >= text.size() || text[at] != '{') return std::string_view::npos;
    const std::size_t end = json::bracket_end(text, at);
    if (end == std::string_view::npos) return end;
    const json::Value args = parse_or_discarded(text.substr(at, end - at));
    if (!args.is_object()) return std::string_view::npos;
    call.arguments = json::dump(args);
    if (call.id.empty()) call.id = new_id(format);
    out.push_back(std::move(call));
    return end;
}

// [TOOL_CALLS] blocks after the content. A reply that is only a JSON array of calls counts too:
// [TOOL_CALLS] is a control token, which a detokenizer may leave out.
ParsedReply parse_mistral(std::string_view text, ToolCallFormat format) {
    const std::size_t first = text.find(kToolCalls);
    if (first == std::string_view::npos) {
        const std::string_view t = trim(text);
        if (t.starts_with('[') && json::bracket_end(t, 0) == t.size()) {
            std::vector<ToolCall> calls;
            if (mistral_block(t, 0, format, calls) != std::string_view::npos) return finish({}, std::move(calls));
        }
        return finish(std::string(text), {});
    }
    std::vector<ToolCall> calls;
    std::size_t pos = first;
    while (pos != std::string_view::npos && text.substr(pos).starts_with(kToolCalls)) {
        pos = mistral_block(text, pos + kToolCalls.size(), format, calls);
        if (pos != std::string_view::npos) pos = skip_space(text, pos);
    }
    if (pos == std::string_view::npos) return finish(std::string(text), {});  // a malformed block
    std::string content(text.substr(0, first));
    content.append(text.substr(pos));
    return finish(std::move(content), std::move(calls));
}

// Where the longest end of `text` that is the start of `marker` (shorter than it) begins; npos
// when none is.
std::size_t partial_marker(std::string_view text, std::string_view marker) {
    for (std::size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
        if (text.substr(text.size() - n) == marker.substr(0, n)) return text.size() - n;
    }
    return std::string_view::npos;
}

}  // namespace

std::size_t tool_call_free_prefix(std::string_view text, ToolCallFormat format) noexcept {
    const std::string_view marker = format == ToolCallFormat::hermes   ? kHermesOpen
                                    : format == ToolCallFormat::llama3 ? kPythonTag
                                                                       : kToolCalls;
    if (const std::size_t at = text.find(marker); at != std::string_view::npos) return at;
    if (format != ToolCallFormat::hermes) {
        // A reply that is a bare call: Llama's JSON, Mistral's array without its control token.
        const std::size_t first = skip_space(text, 0);
        if (first == text.size() || text[first] == (format == ToolCallFormat::llama3 ? '{' : '[')) return 0;
    }
    const std::size_t partial = partial_marker(text, marker);
    return partial == std::string_view::npos ? text.size() : partial;
}

const char* tool_call_format_name(ToolCallFormat format) noexcept {
    switch (format) {
        case ToolCallFormat::llama3: return "llama3";
        case ToolCallFormat::mistral: return "mistral";
        case ToolCallFormat::mistral_args: return "mistral_args";
        default: return "hermes";
    }
}

ToolCallFormat detect_tool_call_format(std::string_view chat_template) noexcept {
    if (chat_template.find(kToolCalls) != std::string_view::npos) {
        return chat_template.find(kArgs) != std::string_view::npos ? ToolCallFormat::mistral_args
                                                                    : ToolCallFormat::mistral;
    }
    if (chat_template.find(kHermesOpen) != std::string_view::npos) return ToolCallFormat::hermes;
    if (chat_template.find(kPythonTag) != std::string_view::npos ||
        chat_template.find("ipython") != std::string_view::npos) {
        return ToolCallFormat::llama3;
    }
    return ToolCallFormat::hermes;
}

ParsedReply parse_tool_calls(std::string_view text, ToolCallFormat format) {
    switch (format) {
        case ToolCallFormat::llama3: return parse_llama3(text);
        case ToolCallFormat::mistral:
        case ToolCallFormat::mistral_args: return parse_mistral(text, format);
        default: return parse_hermes(text);
    }
}

}  // namespace ember

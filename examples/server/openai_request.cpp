#include "openai_request.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

namespace ember_server {
namespace {

using nlohmann::json;

[[noreturn]] void req_fail(const std::string& param, const std::string& message) {
    throw RequestError(400, param.empty() ? message : "'" + param + "': " + message, param);
}

const char* req_type_name(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::string: return "a string";
        case json::value_t::array: return "an array";
        case json::value_t::object: return "an object";
        case json::value_t::number_float: return "a number";
        default: return "an integer";
    }
}

// A present, non-null field, or nullptr. OpenAI clients send null for "not set".
// A number as a message shows it: 3, 0.5, -2 (not 3.0).
std::string req_num(double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return buf;
}

const json* req_field(const json& body, const char* name) {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) return nullptr;
    return &*it;
}

double req_number(const json& body, const char* name, double lo, double hi, double fallback) {
    const json* v = req_field(body, name);
    if (!v) return fallback;
    if (!v->is_number()) req_fail(name, std::string("must be a number, not ") + req_type_name(*v));
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) {
        req_fail(name, req_num(x) + " is out of range [" + req_num(lo) + ", " + req_num(hi) + "]");
    }
    return x;
}

// Integers: a JSON integer, or a float with no fraction (2.0), within [lo, hi].
std::int64_t req_integer(const json& body, const char* name, std::int64_t lo, std::int64_t hi, std::int64_t fallback) {
    const json* v = req_field(body, name);
    if (!v) return fallback;
    std::int64_t x = 0;
    if (v->is_number_integer()) {
        if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
            req_fail(name, v->dump() + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        }
        x = v->get<std::int64_t>();
    } else if (v->is_number_float()) {
        const double d = v->get<double>();
        if (!std::isfinite(d) || d != std::floor(d) || d < -9.2e18 || d > 9.2e18) {
            req_fail(name, "must be an integer, not " + v->dump());
        }
        x = static_cast<std::int64_t>(d);
    } else {
        req_fail(name, std::string("must be an integer, not ") + req_type_name(*v));
    }
    if (x < lo || x > hi) {
        req_fail(name, std::to_string(x) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return x;
}

bool req_bool(const json& body, const char* name, bool fallback) {
    const json* v = req_field(body, name);
    if (!v) return fallback;
    if (!v->is_boolean()) req_fail(name, std::string("must be a boolean, not ") + req_type_name(*v));
    return v->get<bool>();
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts.
std::string req_content(const json& content, const std::string& where) {
    if (content.is_null()) return {};
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) req_fail(where, std::string("must be a string or an array of parts, not ") + req_type_name(content));
    std::string text;
    for (std::size_t i = 0; i < content.size(); ++i) {
        const json& part = content[i];
        const std::string at = where + "[" + std::to_string(i) + "]";
        if (!part.is_object()) req_fail(at, std::string("must be an object, not ") + req_type_name(part));
        const json* type = req_field(part, "type");
        if (!type || !type->is_string() || type->get<std::string>() != "text") {
            req_fail(at + ".type", "only text parts are supported");
        }
        const json* t = req_field(part, "text");
        if (!t || !t->is_string()) req_fail(at + ".text", "must be a string");
        text += t->get<std::string>();
    }
    return text;
}

// A required string field of `obj` (at `where`.`name`).
std::string req_string(const json& obj, const char* name, const std::string& where) {
    const json* v = req_field(obj, name);
    if (!v) req_fail(where + "." + name, "is required");
    if (!v->is_string()) req_fail(where + "." + name, std::string("must be a string, not ") + req_type_name(*v));
    return v->get<std::string>();
}

// An assistant message's tool_calls: [{"id", "type": "function", "function": {"name", "arguments"}}].
std::vector<ember::ToolCall> req_tool_calls(const json& calls, const std::string& where) {
    if (!calls.is_array()) req_fail(where, std::string("must be an array, not ") + req_type_name(calls));
    std::vector<ember::ToolCall> out;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        const json& c = calls[i];
        const std::string at = where + "[" + std::to_string(i) + "]";
        if (!c.is_object()) req_fail(at, std::string("must be an object, not ") + req_type_name(c));
        if (const json* type = req_field(c, "type"); type && *type != "function") req_fail(at + ".type", "must be \"function\"");
        const json* fn = req_field(c, "function");
        if (!fn || !fn->is_object()) req_fail(at + ".function", "must be an object");
        ember::ToolCall call;
        if (req_field(c, "id")) call.id = req_string(c, "id", at);
        call.name = req_string(*fn, "name", at + ".function");
        const json* args = req_field(*fn, "arguments");
        if (!args) req_fail(at + ".function.arguments", "is required");
        // OpenAI sends the arguments as JSON text; an object is taken as what that text means.
        if (!args->is_string() && !args->is_object()) req_fail(at + ".function.arguments", "must be a string of JSON");
        call.arguments = args->is_string() ? args->get<std::string>() : args->dump();
        out.push_back(std::move(call));
    }
    return out;
}

std::vector<ember::ChatMessage> req_messages(const json& body) {
    const json* v = req_field(body, "messages");
    if (!v) req_fail("messages", "is required");
    if (!v->is_array()) req_fail("messages", std::string("must be an array, not ") + req_type_name(*v));
    if (v->empty()) req_fail("messages", "must not be empty");
    std::vector<ember::ChatMessage> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
        const json& m = (*v)[i];
        const std::string at = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) req_fail(at, std::string("must be an object, not ") + req_type_name(m));
        const json* role = req_field(m, "role");
        if (!role || !role->is_string()) req_fail(at + ".role", "must be a string");
        ember::ChatMessage msg;
        msg.role = role->get<std::string>();
        if (msg.role == "developer") msg.role = "system";  // OpenAI's newer name for system
        if (msg.role != "system" && msg.role != "user" && msg.role != "assistant" && msg.role != "tool") {
            req_fail(at + ".role", "'" + msg.role + "' is not one of system, developer, user, assistant, tool");
        }
        const auto content = m.find("content");
        // Only an assistant turn may leave content out (it may only call tools), as OpenAI.
        if (msg.role != "assistant" && (content == m.end() || content->is_null())) req_fail(at + ".content", "is required");
        msg.content = req_content(content == m.end() ? json() : *content, at + ".content");
        if (const json* name = req_field(m, "name"); name && name->is_string()) msg.name = name->get<std::string>();
        if (const json* id = req_field(m, "tool_call_id"); id && id->is_string()) msg.tool_call_id = id->get<std::string>();
        if (const json* calls = req_field(m, "tool_calls")) msg.tool_calls = req_tool_calls(*calls, at + ".tool_calls");
        if (msg.role == "tool" && msg.tool_call_id.empty()) req_fail(at + ".tool_call_id", "is required for role tool");
        out.push_back(std::move(msg));
    }
    return out;
}

void req_prompt(const json& body, const Limits& limits, CompletionRequest& r) {
    const json* v = req_field(body, "prompt");
    if (!v) req_fail("prompt", "is required");
    if (v->is_string()) {
        r.prompt = v->get<std::string>();
        return;
    }
    if (!v->is_array()) req_fail("prompt", std::string("must be a string or an array, not ") + req_type_name(*v));
    if (v->empty()) req_fail("prompt", "must not be empty");
    if ((*v)[0].is_string()) {
        if (v->size() != 1) req_fail("prompt", "more than one prompt per request is not supported yet");
        r.prompt = (*v)[0].get<std::string>();
        return;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
        const json& t = (*v)[i];
        const std::string at = "prompt[" + std::to_string(i) + "]";
        if (!t.is_number_integer()) req_fail(at, std::string("must be a token id (an integer), not ") + req_type_name(t));
        const std::int64_t id = t.is_number_unsigned() && t.get<std::uint64_t>() > std::uint64_t{1} << 62
                                    ? std::numeric_limits<std::int64_t>::max()
                                    : t.get<std::int64_t>();
        if (id < 0 || id >= limits.n_vocab) {
            req_fail(at, "token id " + t.dump() + " is outside the vocabulary [0, " + std::to_string(limits.n_vocab) + ")");
        }
        r.prompt_tokens.push_back(static_cast<ember::Token>(id));
    }
}

std::vector<std::string> req_stop(const json& body) {
    const json* v = req_field(body, "stop");
    if (!v) return {};
    if (v->is_string()) return {v->get<std::string>()};
    if (!v->is_array()) req_fail("stop", std::string("must be a string or an array of strings, not ") + req_type_name(*v));
    if (v->size() > 16) req_fail("stop", "at most 16 stop strings, not " + std::to_string(v->size()));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
        if (!(*v)[i].is_string()) req_fail("stop[" + std::to_string(i) + "]", "must be a string");
        out.push_back((*v)[i].get<std::string>());
    }
    return out;
}

std::vector<std::pair<ember::Token, float>> req_logit_bias(const json& body, const Limits& limits) {
    const json* v = req_field(body, "logit_bias");
    if (!v) return {};
    if (!v->is_object()) req_fail("logit_bias", std::string("must be an object, not ") + req_type_name(*v));
    if (v->size() > 1024) req_fail("logit_bias", "at most 1024 entries, not " + std::to_string(v->size()));
    std::vector<std::pair<ember::Token, float>> out;
    for (const auto& [key, bias] : v->items()) {
        const std::string at = "logit_bias." + key;
        std::int64_t id = -1;
        bool digits = !key.empty() && key.size() <= 12;
        for (const char c : key) digits = digits && c >= '0' && c <= '9';
        if (digits) id = std::stoll(key);
        if (!digits || id >= limits.n_vocab) {
            req_fail(at, "'" + key + "' is not a token id in [0, " + std::to_string(limits.n_vocab) + ")");
        }
        if (!bias.is_number()) req_fail(at, std::string("must be a number, not ") + req_type_name(bias));
        const double b = bias.get<double>();
        if (!std::isfinite(b) || b < -100 || b > 100) req_fail(at, req_num(b) + " is out of range [-100, 100]");
        out.emplace_back(static_cast<ember::Token>(id), static_cast<float>(b));
    }
    return out;
}

// OpenAI's function names: letters, digits, '_' and '-', 1 to 64 of them.
bool req_function_name_ok(const std::string& name) {
    if (name.empty() || name.size() > 64) return false;
    for (const char c : name) {
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
    }
    return true;
}

// tools: [{"type": "function", "function": {"name", "description"?, "parameters"?, "strict"?}}].
// Returns the function names.
std::vector<std::string> req_tool_list(const json& tools) {
    if (!tools.is_array()) req_fail("tools", std::string("must be an array, not ") + req_type_name(tools));
    if (tools.size() > 128) req_fail("tools", "at most 128 tools, not " + std::to_string(tools.size()));
    std::vector<std::string> names;
    for (std::size_t i = 0; i < tools.size(); ++i) {
        const json& t = tools[i];
        const std::string at = "tools[" + std::to_string(i) + "]";
        if (!t.is_object()) req_fail(at, std::string("must be an object, not ") + req_type_name(t));
        if (req_string(t, "type", at) != "function") req_fail(at + ".type", "only \"function\" tools are supported");
        const json* fn = req_field(t, "function");
        if (!fn) req_fail(at + ".function", "is required");
        if (!fn->is_object()) req_fail(at + ".function", std::string("must be an object, not ") + req_type_name(*fn));
        const std::string name = req_string(*fn, "name", at + ".function");
        if (!req_function_name_ok(name)) {
            req_fail(at + ".function.name", "'" + name + "' must be 1 to 64 letters, digits, '_' or '-'");
        }
        for (const std::string& seen : names) {
            if (seen == name) req_fail(at + ".function.name", "'" + name + "' is given twice");
        }
        if (req_field(*fn, "description")) (void)req_string(*fn, "description", at + ".function");
        if (const json* p = req_field(*fn, "parameters"); p && !p->is_object()) {
            req_fail(at + ".function.parameters", std::string("must be a JSON Schema object, not ") + req_type_name(*p));
        }
        names.push_back(name);
    }
    return names;
}

// tools, tool_choice, parallel_tool_calls. OpenAI's default choice: "auto" with tools, else "none".
void req_tools(const json& body, CompletionRequest& r) {
    std::vector<std::string> names;
    if (const json* tools = req_field(body, "tools")) {
        names = req_tool_list(*tools);
        if (!names.empty()) r.tools = tools->dump();
    }
    r.tool_choice = names.empty() ? "none" : "auto";
    r.parallel_tool_calls = req_bool(body, "parallel_tool_calls", true);
    const json* tc = req_field(body, "tool_choice");
    if (!tc) return;
    if (tc->is_string()) {
        r.tool_choice = tc->get<std::string>();
        if (r.tool_choice != "none" && r.tool_choice != "auto" && r.tool_choice != "required") {
            req_fail("tool_choice", "'" + r.tool_choice + "' is not one of none, auto, required, or a function");
        }
    } else if (tc->is_object()) {
        if (req_string(*tc, "type", "tool_choice") != "function") req_fail("tool_choice.type", "must be \"function\"");
        const json* fn = req_field(*tc, "function");
        if (!fn || !fn->is_object()) req_fail("tool_choice.function", "must be an object");
        r.tool_function = req_string(*fn, "name", "tool_choice.function");
        if (std::find(names.begin(), names.end(), r.tool_function) == names.end()) {
            req_fail("tool_choice.function.name", "'" + r.tool_function + "' is not one of the tools");
        }
        r.tool_choice = "function";
    } else {
        req_fail("tool_choice", std::string("must be a string or an object, not ") + req_type_name(*tc));
    }
    if (r.tool_choice != "none" && names.empty()) req_fail("tool_choice", "needs tools");
}

void req_response_format(const json& body, CompletionRequest& r) {
    const json* v = req_field(body, "response_format");
    if (!v) return;
    if (!v->is_object()) req_fail("response_format", std::string("must be an object, not ") + req_type_name(*v));
    const json* type = req_field(*v, "type");
    if (!type || !type->is_string()) req_fail("response_format.type", "must be a string");
    const std::string t = type->get<std::string>();
    if (t == "text") return;
    if (t == "json_object") {
        r.json_schema = R"({"type": "object"})";
        return;
    }
    if (t != "json_schema") req_fail("response_format.type", "'" + t + "' is not one of text, json_object, json_schema");
    const json* js = req_field(*v, "json_schema");
    if (!js || !js->is_object()) req_fail("response_format.json_schema", "must be an object");
    const json* schema = req_field(*js, "schema");
    if (!schema || !schema->is_object()) req_fail("response_format.json_schema.schema", "must be an object");
    r.json_schema = schema->dump();
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body_text, bool chat, const Limits& limits) {
    json body;
    try {
        body = json::parse(body_text);
    } catch (const json::exception& e) {
        throw RequestError(400, std::string("the body is not valid JSON: ") + e.what());
    }
    if (!body.is_object()) req_fail("", std::string("the body must be a JSON object, not ") + req_type_name(body));

    CompletionRequest r;
    r.chat = chat;
    if (chat) r.messages = req_messages(body);
    else req_prompt(body, limits, r);
    if (const json* m = req_field(body, "model")) {
        if (!m->is_string()) req_fail("model", std::string("must be a string, not ") + req_type_name(*m));
        r.model = m->get<std::string>();
    }

    // max_completion_tokens is the chat API's newer name for max_tokens.
    const char* max_name = chat && req_field(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
    r.max_tokens = static_cast<int>(req_integer(body, max_name, 1, limits.max_tokens, limits.max_tokens));

    // OpenAI's sampling: temperature 1, nothing filtered unless asked.
    ember::SamplerOptions& s = r.sampler;
    s.temperature = static_cast<float>(req_number(body, "temperature", 0.0, 2.0, 1.0));
    s.top_p = static_cast<float>(req_number(body, "top_p", 0.0, 1.0, 1.0));
    s.top_k = static_cast<int>(req_integer(body, "top_k", 0, 1 << 24, 0));
    s.min_p = static_cast<float>(req_number(body, "min_p", 0.0, 1.0, 0.0));
    s.presence_penalty = static_cast<float>(req_number(body, "presence_penalty", -2.0, 2.0, 0.0));
    s.frequency_penalty = static_cast<float>(req_number(body, "frequency_penalty", -2.0, 2.0, 0.0));
    s.repeat_penalty = static_cast<float>(req_number(body, "repeat_penalty", 0.01, 100.0, 1.0));
    if (s.presence_penalty != 0 || s.frequency_penalty != 0) {
        // OpenAI's penalties count every generated token, not a recent window.
        s.penalty_last_n = limits.max_tokens;
    }
    if (req_field(body, "seed")) {
        s.seed = static_cast<std::uint64_t>(
            req_integer(body, "seed", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(), 0));
    }
    s.logit_bias = req_logit_bias(body, limits);
    r.stop = req_stop(body);

    r.stream = req_bool(body, "stream", false);
    if (const json* so = req_field(body, "stream_options")) {
        if (!so->is_object()) req_fail("stream_options", std::string("must be an object, not ") + req_type_name(*so));
        r.include_usage = req_bool(*so, "include_usage", false);
    }

    if (chat) {
        r.logprobs = req_bool(body, "logprobs", false);
        r.top_logprobs = static_cast<int>(req_integer(body, "top_logprobs", 0, 20, 0));
        if (r.top_logprobs > 0 && !r.logprobs) req_fail("top_logprobs", "needs \"logprobs\": true");
    } else if (req_field(body, "logprobs")) {
        // The legacy API: logprobs is the number of top tokens to report (0..5).
        r.logprobs = true;
        r.top_logprobs = static_cast<int>(req_integer(body, "logprobs", 0, 5, 0));
    }

    // n choices, each sampled with seed + i; best_of (text completions, as OpenAI's legacy API)
    // candidates, of which the n with the highest mean log-probability are returned.
    r.n = static_cast<int>(req_integer(body, "n", 1, 128, 1));
    r.best_of = chat ? r.n : static_cast<int>(req_integer(body, "best_of", 1, 128, r.n));
    if (r.best_of < r.n) req_fail("best_of", "must be at least n (" + std::to_string(r.n) + ")");
    if (r.best_of > r.n && r.stream) req_fail("best_of", "best_of greater than n cannot be streamed");
    if (!chat && req_bool(body, "echo", false)) req_fail("echo", "echo is not supported yet");
    if (!chat && req_field(body, "suffix")) req_fail("suffix", "suffix is not supported");
    if (chat) req_tools(body, r);
    else if (req_field(body, "tools")) req_fail("tools", "tools need /v1/chat/completions");
    req_response_format(body, r);
    if (!r.json_schema.empty() && (r.tool_choice == "required" || r.tool_choice == "function")) {
        req_fail("response_format", "a response format cannot be forced together with a tool call (tool_choice)");
    }
    return r;
}

}  // namespace ember_server

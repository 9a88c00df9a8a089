#include "openai_response.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ember_server {
namespace {

using ojson = nlohmann::ordered_json;

// Never throws on bad UTF-8 (a token's piece may be half a character): U+FFFD instead.
std::string resp_dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

ojson resp_usage(const Usage& u) {
    return {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

// -INFINITY (a banned token) is not JSON: OpenAI reports -9999 for such tokens.
double resp_logprob(float x) { return std::isfinite(x) ? static_cast<double>(x) : -9999.0; }

ojson resp_chat_logprobs(const std::vector<LogprobEntry>& entries) {
    ojson content = ojson::array();
    for (const LogprobEntry& e : entries) {
        ojson top = ojson::array();
        for (const auto& [text, lp] : e.top) {
            top.push_back({{"token", text}, {"logprob", resp_logprob(lp)}, {"bytes", utf8_bytes(text)}});
        }
        content.push_back({{"token", e.token},
                           {"logprob", resp_logprob(e.logprob)},
                           {"bytes", utf8_bytes(e.token)},
                           {"top_logprobs", std::move(top)}});
    }
    return {{"content", std::move(content)}, {"refusal", nullptr}};
}

ojson resp_text_logprobs(const std::vector<LogprobEntry>& entries, std::size_t offset = 0) {
    ojson tokens = ojson::array(), token_logprobs = ojson::array(), top = ojson::array(), offsets = ojson::array();
    for (const LogprobEntry& e : entries) {
        tokens.push_back(e.token);
        token_logprobs.push_back(resp_logprob(e.logprob));
        ojson alternatives = ojson::object();
        for (const auto& [text, lp] : e.top) alternatives[text] = resp_logprob(lp);
        top.push_back(std::move(alternatives));
        offsets.push_back(offset);
        offset += e.token.size();
    }
    return {{"tokens", std::move(tokens)},
            {"token_logprobs", std::move(token_logprobs)},
            {"top_logprobs", std::move(top)},
            {"text_offset", std::move(offsets)}};
}

ojson resp_base(const ResponseMeta& meta, const char* object) {
    return {{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", meta.model},
            {"system_fingerprint", nullptr}};
}

// OpenAI's tool_calls entries; `index` only in stream deltas (first_index < 0: none).
ojson resp_tool_calls(const std::vector<ember::ToolCall>& calls, long first_index) {
    ojson out = ojson::array();
    for (std::size_t i = 0; i < calls.size(); ++i) {
        ojson c = ojson::object();
        if (first_index >= 0) c["index"] = static_cast<std::size_t>(first_index) + i;
        c["id"] = calls[i].id;
        c["type"] = "function";
        c["function"] = {{"name", calls[i].name}, {"arguments", calls[i].arguments}};
        out.push_back(std::move(c));
    }
    return out;
}

ojson resp_finish(const std::string& reason) { return reason.empty() ? ojson(nullptr) : ojson(reason); }

}  // namespace

std::vector<int> utf8_bytes(const std::string& text) {
    std::vector<int> out;
    out.reserve(text.size());
    for (const char c : text) out.push_back(static_cast<unsigned char>(c));
    return out;
}

std::string error_json(const std::string& message, const std::string& type, const std::string& param,
                       const std::string& code) {
    ojson e = {{"message", message},
              {"type", type},
              {"param", param.empty() ? ojson(nullptr) : ojson(param)},
              {"code", code.empty() ? ojson(nullptr) : ojson(code)}};
    return resp_dump(ojson{{"error", std::move(e)}});
}

std::string completion_json(const ResponseMeta& meta, const std::vector<Completion>& choices, const Usage& usage) {
    ojson j = resp_base(meta, meta.chat ? "chat.completion" : "text_completion");
    ojson out = ojson::array();
    for (std::size_t i = 0; i < choices.size(); ++i) {
        const Completion& c = choices[i];
        ojson choice = {{"index", i}, {"finish_reason", resp_finish(c.finish_reason)}};
        if (meta.chat) {
            choice["message"] = {{"role", "assistant"},
                                 {"content", c.tool_calls.empty() || !c.text.empty() ? ojson(c.text) : ojson(nullptr)},
                                 {"refusal", nullptr}};
            if (!c.tool_calls.empty()) choice["message"]["tool_calls"] = resp_tool_calls(c.tool_calls, -1);
            choice["logprobs"] = c.logprobs ? resp_chat_logprobs(*c.logprobs) : ojson(nullptr);
        } else {
            choice["text"] = c.text;
            choice["logprobs"] = c.logprobs ? resp_text_logprobs(*c.logprobs) : ojson(nullptr);
        }
        out.push_back(std::move(choice));
    }
    j["choices"] = std::move(out);
    j["usage"] = resp_usage(usage);
    return resp_dump(j);
}

std::string stream_chunk(const ResponseMeta& meta, const std::string& text, const std::string& finish_reason,
                         bool first, bool include_usage, ChunkLogprobs logprobs) {
    ojson j = resp_base(meta, meta.chat ? "chat.completion.chunk" : "text_completion");
    ojson lp = nullptr;
    if (logprobs.entries) {
        lp = meta.chat ? resp_chat_logprobs(*logprobs.entries)
                       : resp_text_logprobs(*logprobs.entries, logprobs.text_offset);
    }
    ojson choice = {{"index", meta.choice}, {"logprobs", std::move(lp)}, {"finish_reason", resp_finish(finish_reason)}};
    if (meta.chat) {
        ojson delta = ojson::object();
        if (first) delta["role"] = "assistant";
        if (first || !text.empty()) delta["content"] = text;
        choice["delta"] = std::move(delta);
    } else {
        choice["text"] = text;
    }
    j["choices"] = ojson::array({std::move(choice)});
    if (include_usage) j["usage"] = nullptr;
    return "data: " + resp_dump(j) + "\n\n";
}

std::string stream_tool_calls_chunk(const ResponseMeta& meta, const std::vector<ember::ToolCall>& calls,
                                    std::size_t first_index, bool include_usage) {
    ojson j = resp_base(meta, "chat.completion.chunk");
    ojson delta = {{"tool_calls", resp_tool_calls(calls, static_cast<long>(first_index))}};
    j["choices"] = ojson::array(
        {{{"index", meta.choice}, {"delta", std::move(delta)}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
    if (include_usage) j["usage"] = nullptr;
    return "data: " + resp_dump(j) + "\n\n";
}

std::string stream_usage_chunk(const ResponseMeta& meta, const Usage& usage) {
    ojson j = resp_base(meta, meta.chat ? "chat.completion.chunk" : "text_completion");
    j["choices"] = ojson::array();
    j["usage"] = resp_usage(usage);
    return "data: " + resp_dump(j) + "\n\n";
}

std::string stream_error(const std::string& message, const std::string& type) {
    return "data: " + error_json(message, type) + "\n\n";
}

std::string stream_done() { return "data: [DONE]\n\n"; }

}  // namespace ember_server

// ember-server's OpenAI layer (examples/server): request validation names the field at fault,
// responses and SSE chunks have OpenAI's shapes, the metrics text is Prometheus' format.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "metrics.hpp"
#include "openai_request.hpp"
#include "openai_response.hpp"
#include "server_tools.hpp"

using ember_server::CompletionRequest;
using ember_server::Limits;
using ember_server::parse_completion_request;
using ember_server::RequestError;
using nlohmann::json;

namespace {

constexpr Limits kLimits{512, 256};

CompletionRequest chat_request(const std::string& extra) {
    return parse_completion_request(R"({"messages": [{"role": "user", "content": "hi"}])" + extra + "}", true,
                                    kLimits);
}
CompletionRequest text_request(const std::string& extra) {
    return parse_completion_request(R"({"prompt": "Once")" + extra + "}", false, kLimits);
}

// The message of the RequestError `body` raises (chat when `chat`), or "" when it parses.
std::string error_of(const std::string& body, bool chat = true) {
    try {
        parse_completion_request(body, chat, kLimits);
    } catch (const RequestError& e) {
        CHECK(e.status() == 400);
        return e.what();
    }
    return "";
}
std::string chat_error(const std::string& extra) {
    return error_of(R"({"messages": [{"role": "user", "content": "hi"}])" + extra + "}");
}

}  // namespace

TEST_CASE("a chat request takes OpenAI's defaults and fields") {
    const CompletionRequest r = chat_request("");
    CHECK(r.chat);
    REQUIRE(r.messages.size() == 1);
    CHECK(r.messages[0].role == "user");
    CHECK(r.messages[0].content == "hi");
    CHECK(r.max_tokens == 256);  // the server's cap is the default
    CHECK(r.sampler.temperature == 1.0f);
    CHECK(r.sampler.top_p == 1.0f);
    CHECK(r.sampler.top_k == 0);
    CHECK(r.sampler.min_p == 0.0f);
    CHECK_FALSE(r.stream);

    const CompletionRequest s = chat_request(
        R"(, "model": "m", "max_tokens": 7, "temperature": 0, "top_p": 0.5, "top_k": 3, "min_p": 0.1, "seed": 42,
           "stop": ["a", "b"], "presence_penalty": 1, "frequency_penalty": -1, "logit_bias": {"5": -100, "7": 2.5},
           "logprobs": true, "top_logprobs": 3, "n": 1, "stream": false, "tools": [], "tool_choice": "none",
           "response_format": {"type": "json_object"})");
    CHECK(s.model == "m");
    CHECK(s.max_tokens == 7);
    CHECK(s.sampler.temperature == 0.0f);
    CHECK(s.sampler.top_p == 0.5f);
    CHECK(s.sampler.top_k == 3);
    CHECK(s.sampler.min_p == Approx(0.1f));
    CHECK(s.sampler.seed == 42);
    CHECK(s.stop == std::vector<std::string>{"a", "b"});
    CHECK(s.sampler.presence_penalty == 1.0f);
    CHECK(s.sampler.frequency_penalty == -1.0f);
    REQUIRE(s.sampler.logit_bias.size() == 2);
    CHECK(s.sampler.logit_bias[0] == std::pair<ember::Token, float>{5, -100.0f});
    CHECK(s.logprobs);
    CHECK(s.top_logprobs == 3);
    CHECK(s.json_schema == R"({"type": "object"})");

    CHECK(chat_request(R"(, "stop": "x")").stop == std::vector<std::string>{"x"});
    CHECK(chat_request(R"(, "max_completion_tokens": 9)").max_tokens == 9);
    CHECK(chat_request(R"(, "max_tokens": 3.0)").max_tokens == 3);
    CHECK(chat_request(R"(, "temperature": null)").sampler.temperature == 1.0f);  // null: not set
    const CompletionRequest st = chat_request(R"(, "stream": true, "stream_options": {"include_usage": true})");
    CHECK(st.stream);
    CHECK(st.include_usage);
    const CompletionRequest parts =
        parse_completion_request(R"({"messages": [{"role": "developer", "content": [{"type": "text", "text": "a"},
                                    {"type": "text", "text": "b"}]}]})", true, kLimits);
    CHECK(parts.messages[0].role == "system");
    CHECK(parts.messages[0].content == "ab");
}

TEST_CASE("a text completion request takes a prompt as text or token ids") {
    CHECK(text_request("").prompt == "Once");
    CHECK(parse_completion_request(R"({"prompt": ["Twice"]})", false, kLimits).prompt == "Twice");
    const CompletionRequest ids = parse_completion_request(R"({"prompt": [1, 2, 511]})", false, kLimits);
    CHECK(ids.prompt_tokens == std::vector<ember::Token>{1, 2, 511});
    const CompletionRequest lp = text_request(R"(, "logprobs": 2)");
    CHECK(lp.logprobs);
    CHECK(lp.top_logprobs == 2);
}

TEST_CASE("every bad field is a 400 naming the field and what is wrong") {
    CHECK_THAT(error_of("{bad"), Catch::Contains("not valid JSON"));
    CHECK_THAT(error_of("[1]"), Catch::Contains("must be a JSON object, not an array"));
    CHECK_THAT(error_of("{}"), Catch::Contains("'messages': is required"));
    CHECK_THAT(error_of(R"({"messages": "hi"})"), Catch::Contains("'messages': must be an array, not a string"));
    CHECK_THAT(error_of(R"({"messages": []})"), Catch::Contains("'messages': must not be empty"));
    CHECK_THAT(error_of(R"({"messages": [{"role": "robot", "content": "x"}]})"),
               Catch::Contains("'messages[0].role': 'robot' is not one of"));
    CHECK_THAT(error_of(R"({"messages": [{"role": "user"}]})"), Catch::Contains("'messages[0].content': is required"));
    CHECK_THAT(error_of(R"({"messages": [{"role": "system", "content": null}]})"),
               Catch::Contains("'messages[0].content': is required"));
    CHECK_THAT(error_of(R"({"messages": [{"role": "user", "content": 5}]})"),
               Catch::Contains("'messages[0].content': must be a string or an array of parts, not an integer"));
    CHECK_THAT(error_of(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})"),
               Catch::Contains("'messages[0].content[0].type': only text parts"));
    // Each extra field after a valid "messages", and what the 400 must say of it.
    const std::pair<const char*, const char*> bad_chat_fields[] = {
        {R"(, "max_tokens": "a")", "'max_tokens': must be an integer, not a string"},
        {R"(, "max_tokens": 0)", "'max_tokens': 0 is out of range [1, 256]"},
        {R"(, "max_tokens": 257)", "'max_tokens': 257 is out of range [1, 256]"},
        {R"(, "max_tokens": 18446744073709551615)", "'max_tokens':"},
        {R"(, "max_tokens": 2.5)", "'max_tokens': must be an integer, not 2.5"},
        {R"(, "temperature": 3)", "'temperature': 3 is out of range [0, 2]"},
        {R"(, "temperature": "hot")", "'temperature': must be a number, not a string"},
        {R"(, "top_p": -0.5)", "'top_p': -0.5 is out of range [0, 1]"},
        {R"(, "top_k": -1)", "'top_k': -1 is out of range"},
        {R"(, "min_p": 2)", "'min_p':"},
        {R"(, "presence_penalty": 5)", "'presence_penalty': 5 is out of range [-2, 2]"},
        {R"(, "frequency_penalty": true)", "'frequency_penalty': must be a number, not a boolean"},
        {R"(, "seed": "x")", "'seed': must be an integer"},
        {R"(, "stop": 1)", "'stop': must be a string or an array of strings"},
        {R"(, "stop": ["a", 2])", "'stop[1]': must be a string"},
        {R"(, "logit_bias": [1])", "'logit_bias': must be an object, not an array"},
        {R"(, "logit_bias": {"512": 1})", "'logit_bias.512': '512' is not a token id in [0, 512)"},
        {R"(, "logit_bias": {"-1": 1})", "'logit_bias.-1'"},
        {R"(, "logit_bias": {"abc": 1})", "'logit_bias.abc'"},
        {R"(, "logit_bias": {"3": 101})", "'logit_bias.3': 101 is out of range [-100, 100]"},
        {R"(, "logit_bias": {"3": "x"})", "'logit_bias.3': must be a number"},
        {R"(, "logprobs": 1)", "'logprobs': must be a boolean, not an integer"},
        {R"(, "logprobs": true, "top_logprobs": 21)", "'top_logprobs': 21 is out of range [0, 20]"},
        {R"(, "top_logprobs": 2)", "needs \"logprobs\": true"},
        {R"(, "stream": "yes")", "'stream': must be a boolean, not a string"},
        {R"(, "stream_options": 1)", "'stream_options': must be an object"},
        {R"(, "n": 129)", "'n': 129 is out of range [1, 128]"},
        {R"(, "n": 0)", "'n': 0 is out of range"},
        {R"(, "model": 3)", "'model': must be a string"},
        {R"(, "tools": [{"type": "function"}])", "'tools[0].function': is required"},
        {R"(, "response_format": {"type": "xml"})", "'response_format.type': 'xml' is not one of"},
    };
    for (const auto& [extra, expected] : bad_chat_fields) {
        INFO(extra);
        CHECK_THAT(chat_error(extra), Catch::Contains(expected));
    }
    CHECK_THAT(error_of(R"({"prompt": 5})", false), Catch::Contains("'prompt': must be a string or an array, not an integer"));
    CHECK_THAT(error_of(R"({"prompt": ["a", "b"]})", false), Catch::Contains("more than one prompt"));
    CHECK_THAT(error_of(R"({"prompt": [1, 512]})", false),
               Catch::Contains("'prompt[1]': token id 512 is outside the vocabulary [0, 512)"));
    CHECK_THAT(error_of(R"({"prompt": [1, -1]})", false), Catch::Contains("'prompt[1]': token id -1"));
    CHECK_THAT(error_of(R"({"prompt": "a", "logprobs": 6})", false), Catch::Contains("'logprobs': 6 is out of range [0, 5]"));
    CHECK_THAT(error_of(R"({"prompt": "a", "echo": true})", false), Catch::Contains("'echo'"));
    CHECK_THAT(error_of(R"({"prompt": "a", "n": 3, "best_of": 2})", false),
               Catch::Contains("'best_of': must be at least n (3)"));
    CHECK_THAT(error_of(R"({"prompt": "a", "best_of": 2, "stream": true})", false),
               Catch::Contains("'best_of': best_of greater than n cannot be streamed"));
    CHECK_THAT(error_of(R"({"prompt": "a", "best_of": 0})", false), Catch::Contains("'best_of': 0 is out of range"));
}

TEST_CASE("n and best_of: choices and candidates") {
    const ember_server::Limits limits{512, 64};
    auto text = ember_server::parse_completion_request(R"({"prompt": "a", "n": 3})", false, limits);
    CHECK(text.n == 3);
    CHECK(text.best_of == 3);  // best_of defaults to n
    text = ember_server::parse_completion_request(R"({"prompt": "a", "n": 2, "best_of": 5})", false, limits);
    CHECK(text.n == 2);
    CHECK(text.best_of == 5);
    text = ember_server::parse_completion_request(R"({"prompt": "a", "n": 2, "best_of": 2, "stream": true})", false, limits);
    CHECK(text.best_of == 2);  // best_of equal to n streams
    const auto chat = ember_server::parse_completion_request(
        R"({"messages": [{"role": "user", "content": "hi"}], "n": 4, "stream": true})", true, limits);
    CHECK(chat.n == 4);
    CHECK(chat.best_of == 4);

    // Every choice has its index; usage is the response's, not a choice's.
    ember_server::ResponseMeta meta{"cmpl-2", 1700000000, "m", false};
    const std::vector<ember_server::Completion> choices = {{"one", "stop", {}, std::nullopt},
                                                           {"two", "length", {}, std::nullopt}};
    json j = json::parse(ember_server::completion_json(meta, choices, {4, 9, 0}));
    REQUIRE(j["choices"].size() == 2);
    CHECK(j["choices"][0]["index"] == 0);
    CHECK(j["choices"][0]["text"] == "one");
    CHECK(j["choices"][1]["index"] == 1);
    CHECK(j["choices"][1]["text"] == "two");
    CHECK(j["choices"][1]["finish_reason"] == "length");
    CHECK(j["usage"]["completion_tokens"] == 9);
    CHECK(j["usage"]["total_tokens"] == 13);
    // A stream chunk carries its choice's index.
    meta.chat = true;
    meta.choice = 3;
    const std::string chunk = ember_server::stream_chunk(meta, "x", "", false, false);
    const json c = json::parse(chunk.substr(6));
    CHECK(c["choices"][0]["index"] == 3);
    CHECK(c["choices"][0]["delta"]["content"] == "x");
    const std::string calls = ember_server::stream_tool_calls_chunk(meta, {{"call_1", "f", "{}"}}, 0, false);
    CHECK(json::parse(calls.substr(6))["choices"][0]["index"] == 3);
}

TEST_CASE("a completion has OpenAI's shape") {
    ember_server::ResponseMeta meta{"chatcmpl-1", 1700000000, "m", true};
    ember_server::Completion c{"Hello", "stop", {5, 2, 1}, std::nullopt};
    json j = json::parse(ember_server::completion_json(meta, c));
    CHECK(j["id"] == "chatcmpl-1");
    CHECK(j["object"] == "chat.completion");
    CHECK(j["created"] == 1700000000);
    CHECK(j["model"] == "m");
    CHECK(j["choices"][0]["index"] == 0);
    CHECK(j["choices"][0]["message"]["role"] == "assistant");
    CHECK(j["choices"][0]["message"]["content"] == "Hello");
    CHECK(j["choices"][0]["finish_reason"] == "stop");
    CHECK(j["choices"][0]["logprobs"].is_null());
    CHECK(j["usage"]["prompt_tokens"] == 5);
    CHECK(j["usage"]["completion_tokens"] == 2);
    CHECK(j["usage"]["total_tokens"] == 7);
    CHECK(j["usage"]["prompt_tokens_details"]["cached_tokens"] == 1);

    c.logprobs = std::vector<ember_server::LogprobEntry>{{"He", -0.5f, {{"He", -0.5f}, {"A", -1.5f}}},
                                                         {"\xE2\x82", -1.0f, {}}};  // half a character
    j = json::parse(ember_server::completion_json(meta, c));
    const json& lp = j["choices"][0]["logprobs"]["content"];
    REQUIRE(lp.size() == 2);
    CHECK(lp[0]["token"] == "He");
    CHECK(lp[0]["logprob"] == -0.5);
    CHECK(lp[0]["bytes"] == json::array({72, 101}));
    CHECK(lp[0]["top_logprobs"][1]["token"] == "A");
    CHECK(lp[1]["bytes"] == json::array({0xE2, 0x82}));  // the bytes are exact, the text replaced

    meta.chat = false;
    meta.id = "cmpl-1";
    j = json::parse(ember_server::completion_json(meta, c));
    CHECK(j["object"] == "text_completion");
    CHECK(j["choices"][0]["text"] == "Hello");
    CHECK(j["choices"][0]["logprobs"]["tokens"][0] == "He");
    CHECK(j["choices"][0]["logprobs"]["token_logprobs"][0] == -0.5);
    CHECK(j["choices"][0]["logprobs"]["top_logprobs"][0]["A"] == -1.5);
    CHECK(j["choices"][0]["logprobs"]["text_offset"] == json::array({0, 2}));
}

TEST_CASE("stream chunks are server-sent events in OpenAI's chunk shapes") {
    const ember_server::ResponseMeta chat{"chatcmpl-2", 1, "m", true};
    const auto body_of = [](const std::string& event) {
        REQUIRE(event.rfind("data: ", 0) == 0);
        REQUIRE(event.size() > 8);
        REQUIRE(event.substr(event.size() - 2) == "\n\n");
        return json::parse(event.substr(6, event.size() - 8));
    };
    json first = body_of(ember_server::stream_chunk(chat, "", "", true, false));
    CHECK(first["object"] == "chat.completion.chunk");
    CHECK(first["choices"][0]["delta"]["role"] == "assistant");
    CHECK(first["choices"][0]["delta"]["content"] == "");
    CHECK(first["choices"][0]["finish_reason"].is_null());
    CHECK_FALSE(first.contains("usage"));
    json mid = body_of(ember_server::stream_chunk(chat, "Hi", "", false, true));
    CHECK(mid["choices"][0]["delta"] == json{{"content", "Hi"}});
    CHECK(mid["usage"].is_null());
    json last = body_of(ember_server::stream_chunk(chat, "", "length", false, true));
    CHECK(last["choices"][0]["delta"] == json::object());
    CHECK(last["choices"][0]["finish_reason"] == "length");
    json usage = body_of(ember_server::stream_usage_chunk(chat, {3, 4, 0}));
    CHECK(usage["choices"] == json::array());
    CHECK(usage["usage"]["total_tokens"] == 7);
    json text = body_of(ember_server::stream_chunk({"cmpl-3", 1, "m", false}, "a\nb", "", false, false));
    CHECK(text["object"] == "text_completion");
    CHECK(text["choices"][0]["text"] == "a\nb");
    CHECK(text["choices"][0]["logprobs"].is_null());
    // A chunk with logprobs: chat carries "content" entries; text carries offsets in the answer.
    const std::vector<ember_server::LogprobEntry> entries = {{"a", -0.5f, {{"a", -0.5f}, {"b", -1.5f}}},
                                                             {"\nb", -0.25f, {}}};
    json chat_lp = body_of(ember_server::stream_chunk(chat, "a\nb", "", false, false, {&entries, 0}));
    const json& content = chat_lp["choices"][0]["logprobs"]["content"];
    REQUIRE(content.size() == 2);
    CHECK(content[0]["token"] == "a");
    CHECK(content[0]["logprob"] == -0.5);
    CHECK(content[0]["top_logprobs"][1]["token"] == "b");
    CHECK(content[1]["bytes"] == json::array({10, 98}));
    json text_lp = body_of(ember_server::stream_chunk({"cmpl-3", 1, "m", false}, "", "", false, false, {&entries, 7}));
    CHECK(text_lp["choices"][0]["text"] == "");
    CHECK(text_lp["choices"][0]["logprobs"]["tokens"] == json::array({"a", "\nb"}));
    CHECK(text_lp["choices"][0]["logprobs"]["text_offset"] == json::array({7, 8}));
    CHECK(text_lp["choices"][0]["logprobs"]["top_logprobs"][0]["b"] == -1.5);
    CHECK(ember_server::stream_done() == "data: [DONE]\n\n");
    json err = body_of(ember_server::stream_error("boom", "server_error"));
    CHECK(err["error"]["message"] == "boom");
}

TEST_CASE("errors are OpenAI's error objects") {
    const json e = json::parse(ember_server::error_json("bad", "invalid_request_error", "max_tokens"));
    CHECK(e["error"]["message"] == "bad");
    CHECK(e["error"]["type"] == "invalid_request_error");
    CHECK(e["error"]["param"] == "max_tokens");
    CHECK(e["error"]["code"].is_null());
    CHECK(json::parse(ember_server::error_json("x"))["error"]["param"].is_null());
}

TEST_CASE("the metrics are Prometheus text") {
    ember_server::Metrics m;
    m.count_request("/v1/completions", 200);
    m.count_request("/v1/completions", 200);
    m.count_request("/v1/completions", 400);
    m.observe_generation(5, 11, 0.004, 0.104);  // 10 tokens after the first in 0.1 s
    m.observe_generation(0, 0, 0.0, 0.5, true);  // cancelled in the queue: no timing
    ember_server::EngineGauges g;
    g.loaded = true;
    g.kv_pages = 100;
    g.kv_pages_free = 60;
    g.queued = 2;
    g.prefix_hits = 3;
    const std::string text = m.render(g);
    CHECK_THAT(text, Catch::Contains("# TYPE ember_requests_total counter\n"));
    CHECK_THAT(text, Catch::Contains("ember_requests_total{endpoint=\"/v1/completions\",status=\"200\"} 2\n"));
    CHECK_THAT(text, Catch::Contains("ember_requests_total{endpoint=\"/v1/completions\",status=\"400\"} 1\n"));
    CHECK_THAT(text, Catch::Contains("ember_prompt_tokens_total 5\n"));
    CHECK_THAT(text, Catch::Contains("ember_generated_tokens_total 11\n"));
    CHECK_THAT(text, Catch::Contains("ember_generations_cancelled_total 1\n"));
    CHECK_THAT(text, Catch::Contains("# TYPE ember_time_to_first_token_seconds histogram\n"));
    CHECK_THAT(text, Catch::Contains("ember_time_to_first_token_seconds_bucket{le=\"0.0025\"} 0\n"));
    CHECK_THAT(text, Catch::Contains("ember_time_to_first_token_seconds_bucket{le=\"0.005\"} 1\n"));
    CHECK_THAT(text, Catch::Contains("ember_time_to_first_token_seconds_bucket{le=\"+Inf\"} 1\n"));
    CHECK_THAT(text, Catch::Contains("ember_time_to_first_token_seconds_count 1\n"));
    CHECK_THAT(text, Catch::Contains("ember_time_per_output_token_seconds_bucket{le=\"0.005\"} 0\n"));
    CHECK_THAT(text, Catch::Contains("ember_time_per_output_token_seconds_bucket{le=\"0.01\"} 1\n"));
    CHECK_THAT(text, Catch::Contains("ember_kv_pages_used 40\n"));
    CHECK_THAT(text, Catch::Contains("ember_kv_pages_free 60\n"));
    CHECK_THAT(text, Catch::Contains("ember_requests_queued 2\n"));
    CHECK_THAT(text, Catch::Contains("ember_prefix_cache_hits_total 3\n"));
    // Every line is a comment or "name{labels} value".
    std::size_t begin = 0;
    while (begin < text.size()) {
        const std::size_t end = text.find('\n', begin);
        REQUIRE(end != std::string::npos);
        const std::string line = text.substr(begin, end - begin);
        INFO(line);
        CHECK((line.rfind("# ", 0) == 0 || line.find(' ') != std::string::npos));
        begin = end + 1;
    }
}

// ---- tools (docs/server.md, "Tools") -------------------------------------------------------

namespace {

constexpr const char* kTools = R"(, "tools": [{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "now", "description": "The time"}}])";

}  // namespace

TEST_CASE("tools, tool_choice and tool messages are read") {
    const CompletionRequest none = chat_request("");
    CHECK(none.tools.empty());
    CHECK(none.tool_choice == "none");

    const CompletionRequest r = chat_request(kTools);
    CHECK(json::parse(r.tools)[1]["function"]["name"] == "now");
    CHECK(r.tool_choice == "auto");  // OpenAI's default with tools
    CHECK(r.parallel_tool_calls);
    CHECK(ember_server::wants_tool_calls(r));

    CHECK(chat_request(std::string(kTools) + R"(, "tool_choice": "required")").tool_choice == "required");
    const CompletionRequest off = chat_request(std::string(kTools) + R"(, "tool_choice": "none")");
    CHECK(off.tool_choice == "none");
    CHECK_FALSE(ember_server::wants_tool_calls(off));
    CHECK_FALSE(off.tools.empty());  // still rendered by the template
    const CompletionRequest named = chat_request(
        std::string(kTools) + R"(, "tool_choice": {"type": "function", "function": {"name": "now"}}, "parallel_tool_calls": false)");
    CHECK(named.tool_choice == "function");
    CHECK(named.tool_function == "now");
    CHECK_FALSE(named.parallel_tool_calls);

    const CompletionRequest history = parse_completion_request(R"({"messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "sunny"}]})",
                                                               true, kLimits);
    REQUIRE(history.messages.size() == 3);
    const ember::ChatMessage& call = history.messages[1];
    CHECK(call.content.empty());
    REQUIRE(call.tool_calls.size() == 1);
    CHECK(call.tool_calls[0].id == "call_1");
    CHECK(call.tool_calls[0].name == "get_weather");
    CHECK(call.tool_calls[0].arguments == R"({"city": "Paris"})");
    CHECK(history.messages[2].tool_call_id == "call_1");
    CHECK(history.messages[2].name == "get_weather");
    CHECK(history.messages[2].content == "sunny");
}

TEST_CASE("bad tools are 400s naming the field") {
    const std::string tool = R"({"type": "function", "function": {"name": "f"}})";
    const std::pair<std::string, const char*> bad[] = {
        {R"(, "tools": {})", "'tools': must be an array, not an object"},
        {R"(, "tools": [3])", "'tools[0]': must be an object, not an integer"},
        {R"(, "tools": [{"function": {"name": "f"}}])", "'tools[0].type': is required"},
        {R"(, "tools": [{"type": "retrieval", "function": {"name": "f"}}])", "'tools[0].type': only \"function\""},
        {R"(, "tools": [{"type": "function", "function": 1}])", "'tools[0].function': must be an object"},
        {R"(, "tools": [{"type": "function", "function": {}}])", "'tools[0].function.name': is required"},
        {R"(, "tools": [{"type": "function", "function": {"name": 7}}])", "'tools[0].function.name': must be a string"},
        {R"(, "tools": [{"type": "function", "function": {"name": "a b"}}])", "'tools[0].function.name': 'a b' must be"},
        {", \"tools\": [" + tool + ", " + tool + "]", "'tools[1].function.name': 'f' is given twice"},
        {R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters": "x"}}])",
         "'tools[0].function.parameters': must be a JSON Schema object"},
        {R"(, "tools": [{"type": "function", "function": {"name": "f", "description": 1}}])",
         "'tools[0].function.description': must be a string"},
        {", \"tools\": [" + tool + "], \"tool_choice\": \"always\"", "'tool_choice': 'always' is not one of"},
        {", \"tools\": [" + tool + "], \"tool_choice\": 1", "'tool_choice': must be a string or an object"},
        {", \"tools\": [" + tool + R"(], "tool_choice": {"type": "function", "function": {"name": "g"}})",
         "'tool_choice.function.name': 'g' is not one of the tools"},
        {", \"tools\": [" + tool + R"(], "tool_choice": {"type": "function"})", "'tool_choice.function': must be an object"},
        {R"(, "tool_choice": "required")", "'tool_choice': needs tools"},
        {", \"tools\": [" + tool + "], \"parallel_tool_calls\": 1", "'parallel_tool_calls': must be a boolean"},
        {", \"tools\": [" + tool + R"(], "tool_choice": "required", "response_format": {"type": "json_object"})",
         "'response_format': a response format cannot be forced together with a tool call"},
        {R"(, "messages": [{"role": "tool", "content": "x"}])", "'messages[0].tool_call_id': is required for role tool"},
        {R"(, "messages": [{"role": "assistant", "tool_calls": {}}])", "'messages[0].tool_calls': must be an array"},
        {R"(, "messages": [{"role": "assistant", "tool_calls": [{"type": "function"}]}])",
         "'messages[0].tool_calls[0].function': must be an object"},
        {R"(, "messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}])",
         "'messages[0].tool_calls[0].function.name': is required"},
        {R"(, "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}])",
         "'messages[0].tool_calls[0].function.arguments': is required"},
        {R"(, "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": 3}}]}])",
         "'messages[0].tool_calls[0].function.arguments': must be a string of JSON"},
        {R"(, "messages": [{"role": "assistant", "tool_calls": [{"type": "code", "function": {}}]}])",
         "'messages[0].tool_calls[0].type': must be \"function\""},
    };
    for (const auto& [extra, expected] : bad) {
        INFO(extra);
        // "messages" given twice: the last one counts (as in any JSON object read by nlohmann).
        CHECK_THAT(chat_error(extra), Catch::Contains(expected));
    }
    CHECK_THAT(error_of(R"({"prompt": "a", "tools": []})", false), Catch::Contains("'tools': tools need /v1/chat/completions"));
}

TEST_CASE("tool_choice required or a function makes a grammar; a bad schema is a 400 naming tools") {
    CompletionRequest r = chat_request(kTools);
    CHECK(ember_server::tool_grammar(r, ember::ToolCallFormat::hermes).empty());  // auto: free
    r.tool_choice = "required";
    CHECK_THAT(ember_server::tool_grammar(r, ember::ToolCallFormat::hermes), Catch::Contains("<tool_call>"));
    r = chat_request(R"(, "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "wat"}}}],
                        "tool_choice": "required")");
    try {
        (void)ember_server::tool_grammar(r, ember::ToolCallFormat::hermes);
        FAIL("no error");
    } catch (const RequestError& e) {
        CHECK(e.status() == 400);
        CHECK(e.param() == "tools");
        CHECK_THAT(std::string(e.what()), Catch::Contains("function 'f'"));
    }
}

TEST_CASE("a completion with tool calls has OpenAI's shape") {
    const ember_server::ResponseMeta meta{"chatcmpl-1", 1, "m", true};
    ember_server::Completion c{"<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>", "stop", {5, 2, 0},
                               std::nullopt};
    ember_server::split_tool_calls(ember::ToolCallFormat::hermes, c);
    json j = json::parse(ember_server::completion_json(meta, c));
    const json& msg = j["choices"][0]["message"];
    CHECK(j["choices"][0]["finish_reason"] == "tool_calls");
    CHECK(msg["content"].is_null());  // no text besides the calls
    REQUIRE(msg["tool_calls"].size() == 1);
    CHECK(msg["tool_calls"][0]["type"] == "function");
    CHECK(msg["tool_calls"][0]["function"] == json{{"name", "now"}, {"arguments", "{}"}});
    CHECK(msg["tool_calls"][0]["id"].get<std::string>().rfind("call_", 0) == 0);
    CHECK_FALSE(msg["tool_calls"][0].contains("index"));

    ember_server::Completion cut{"Hm.\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}</tool_call><tool_call>{\"na", "length",
                                 {5, 2, 0}, std::nullopt};
    ember_server::split_tool_calls(ember::ToolCallFormat::hermes, cut);
    j = json::parse(ember_server::completion_json(meta, cut));
    CHECK(j["choices"][0]["finish_reason"] == "length");  // cut short: says so
    CHECK(j["choices"][0]["message"]["content"] == "Hm.\n<tool_call>{\"na");
    CHECK(j["choices"][0]["message"]["tool_calls"].size() == 1);

    ember_server::Completion plain{"Just text.", "stop", {5, 2, 0}, std::nullopt};
    ember_server::split_tool_calls(ember::ToolCallFormat::hermes, plain);
    j = json::parse(ember_server::completion_json(meta, plain));
    CHECK(j["choices"][0]["message"]["content"] == "Just text.");
    CHECK_FALSE(j["choices"][0]["message"].contains("tool_calls"));
    CHECK(j["choices"][0]["finish_reason"] == "stop");
}

TEST_CASE("a stream with tools sends text as it comes and the calls at the end") {
    const ember_server::ResponseMeta meta{"chatcmpl-2", 1, "m", true};
    const auto events_of = [](const std::string& sse) {
        std::vector<json> out;
        for (std::size_t at = 0; (at = sse.find("data: ", at)) != std::string::npos;) {
            const std::size_t end = sse.find("\n\n", at);
            REQUIRE(end != std::string::npos);
            out.push_back(json::parse(sse.substr(at + 6, end - at - 6)));
            at = end;
        }
        return out;
    };

    ember_server::ToolStream calls(ember::ToolCallFormat::hermes);
    std::string sent;
    for (const char* piece : {"Let me ", "look.\n<tool", "_call>\n{\"name\": \"now\", ", "\"arguments\": {}}\n</tool_call>",
                              "\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}</tool_call>"}) {
        sent += calls.feed(piece);
    }
    CHECK(sent == "Let me look.\n");  // the calls were held back
    std::string finish = "stop";
    const std::vector<json> end = events_of(calls.finish(meta, finish, true));
    CHECK(finish == "tool_calls");
    REQUIRE(end.size() == 1);
    CHECK(end[0]["object"] == "chat.completion.chunk");
    CHECK(end[0]["usage"].is_null());
    const json& deltas = end[0]["choices"][0]["delta"]["tool_calls"];
    REQUIRE(deltas.size() == 2);
    CHECK(deltas[0]["index"] == 0);
    CHECK(deltas[1]["index"] == 1);
    CHECK(deltas[0]["type"] == "function");
    CHECK(deltas[1]["function"]["name"] == "get_weather");
    CHECK(json::parse(deltas[1]["function"]["arguments"].get<std::string>())["city"] == "Zürich");
    CHECK(deltas[0]["id"] != deltas[1]["id"]);

    // Text that only looked like the start of a call goes out at the end, as content.
    ember_server::ToolStream plain(ember::ToolCallFormat::hermes);
    CHECK(plain.feed("a <tool") == "a ");
    CHECK(plain.feed("box> b") == "<toolbox> b");
    CHECK(plain.feed(" <tool_call>{oops") == " ");
    finish = "length";
    const std::vector<json> rest = events_of(plain.finish(meta, finish, false));
    CHECK(finish == "length");
    REQUIRE(rest.size() == 1);
    CHECK(rest[0]["choices"][0]["delta"] == json{{"content", "<tool_call>{oops"}});
    CHECK(plain.finish(meta, finish, false).empty());  // nothing held any more
}

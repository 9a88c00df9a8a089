#include "routes.hpp"

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>

#include "openai_request.hpp"
#include "openai_response.hpp"
#include "server_tools.hpp"

namespace ember_server {
namespace {

using Clock = std::chrono::steady_clock;

// What a running request hands from the engine's worker thread to its HTTP handler thread.
struct Exchange {
    std::mutex mutex;
    std::condition_variable cv;
    std::string pending;         // text released and not yet sent
    std::vector<ember::TokenLogprobs> pending_logprobs;  // (stream with logprobs) not yet sent
    bool done = false;
    ember::RequestResult result;
    std::atomic<bool> client_gone{false};
    bool timed_out = false;
};

// Holds one of ServerState::in_flight while a request is admitted (for streams: until the
// stream's resources are released).
struct InFlight {
    explicit InFlight(std::atomic<int>& n) : count(n) {}
    ~InFlight() { count.fetch_sub(1); }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    std::atomic<int>& count;
};

void route_error(httplib::Response& res, int status, const std::string& message,
                 const std::string& type = "invalid_request_error", const std::string& param = {},
                 const std::string& code = {}) {
    res.status = status;
    res.set_content(error_json(message, type, param, code), "application/json");
}

void route_busy(httplib::Response& res, const std::string& message) {
    route_error(res, 503, message, "server_error");
    res.set_header("Retry-After", "1");
}

std::string route_make_id(ServerState& state, bool chat) {
    // splitmix64 of a per-process salt and a counter: unique, not guessable from the count.
    std::uint64_t z = state.id_salt + 0x9E3779B97F4A7C15ull * (state.next_id.fetch_add(1) + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(z));
    return std::string(chat ? "chatcmpl-" : "cmpl-") + buf;
}

const char* route_finish_reason(ember::StopReason r) {
    switch (r) {
        case ember::StopReason::eog:
        case ember::StopReason::stop_string: return "stop";
        default: return "length";
    }
}

// The prompt's tokens, as ember-chat makes them (chat: the template, special tokens parsed,
// no doubled BOS; text: add BOS).
std::vector<ember::Token> route_prompt(const ServerState& state, const CompletionRequest& r) {
    const ember::Model& model = *state.model;
    if (!r.chat) return r.prompt_tokens.empty() ? model.tokenize(r.prompt, {.add_bos = true}) : r.prompt_tokens;
    std::string text;
    try {
        text = model.apply_chat_template(r.messages, {.tools = r.tools, .template_override = state.options.chat_template});
    } catch (const ember::Error& e) {
        throw RequestError(400, std::string("the chat template failed on these messages: ") + e.what(), "messages");
    }
    auto tokens = model.tokenize(text, {.add_bos = true, .parse_special = true});
    if (tokens.size() >= 2 && tokens[0] == model.bos() && tokens[1] == model.bos()) tokens.erase(tokens.begin());
    return tokens;
}

ember::Sampler route_sampler(const ServerState& state, const CompletionRequest& r) {
    ember::SamplerOptions so = r.sampler;
    so.grammar = tool_grammar(r, tool_format(*state.model, state.options.chat_template));
    try {
        if (r.json_schema.empty() && so.grammar.empty()) return ember::Sampler(so);
        so.json_schema = r.json_schema;
        return ember::Sampler(*state.model, so);
    } catch (const ember::Error& e) {
        throw RequestError(400, std::string("invalid sampling options: ") + e.what(),
                           r.json_schema.empty() ? "" : "response_format");
    }
}

Usage route_usage(const ember::RequestResult& r) {
    return {r.prompt_tokens, static_cast<std::int64_t>(r.tokens.size()), r.cached_tokens};
}

std::vector<LogprobEntry> route_logprobs(const ember::Model& model, const std::vector<ember::TokenLogprobs>& tokens) {
    std::vector<LogprobEntry> out;
    for (const ember::TokenLogprobs& t : tokens) {
        LogprobEntry e{model.token_to_piece(t.token), t.logprob, {}};
        for (const ember::TokenLogprob& alt : t.top) e.top.emplace_back(model.token_to_piece(alt.token), alt.logprob);
        out.push_back(std::move(e));
    }
    return out;
}

void handle_completion(ServerState& state, const httplib::Request& req, httplib::Response& res, bool chat) {
    if (state.stopping.load()) return route_busy(res, "the server is shutting down");
    if (!state.loaded.load(std::memory_order_acquire)) return route_busy(res, "the model is loading");
    const ember::Model& model = *state.model;
    ember::Engine& engine = *state.engine;

    const Limits limits{model.n_vocab(), state.options.max_tokens};
    CompletionRequest cr = parse_completion_request(req.body, chat, limits);
    std::vector<ember::Token> prompt = route_prompt(state, cr);
    const int context = engine.context();
    if (prompt.empty()) throw RequestError(400, "the prompt is empty (no tokens)", chat ? "messages" : "prompt");
    if (prompt.size() >= static_cast<std::size_t>(context)) {
        throw RequestError(400,
                           "the prompt has " + std::to_string(prompt.size()) + " tokens, but the context holds " +
                               std::to_string(context) + " tokens, prompt and answer together (-c)",
                           chat ? "messages" : "prompt", "invalid_request_error");
    }
    ember::Sampler sampler = route_sampler(state, cr);

    // Admission: at most --parallel running plus --queue waiting.
    const int limit = state.options.parallel + state.options.queue;
    if (state.in_flight.fetch_add(1) >= limit) {
        state.in_flight.fetch_sub(1);
        return route_busy(res, "the server is busy: " + std::to_string(limit) + " requests running or queued");
    }
    auto admitted = std::make_shared<InFlight>(state.in_flight);

    auto ex = std::make_shared<Exchange>();
    ember::Request request;
    request.prompt = std::move(prompt);
    request.sampler = std::move(sampler);
    request.options.max_tokens = cr.max_tokens;
    request.options.stop = cr.stop;
    request.options.logprobs = cr.logprobs;
    request.options.top_logprobs = cr.top_logprobs;
    if (cr.logprobs && cr.stream) {
        request.options.on_logprobs = [ex](const ember::TokenLogprobs& t) {
            const std::lock_guard lock(ex->mutex);
            ex->pending_logprobs.push_back(t);
        };
    }
    request.options.on_token = [ex](ember::Token, std::string_view text) {
        if (!text.empty()) {
            const std::lock_guard lock(ex->mutex);
            ex->pending.append(text);
        }
        ex->cv.notify_all();
        return !ex->client_gone.load();
    };
    Metrics* metrics = &state.metrics;
    request.on_done = [ex, metrics](const ember::RequestResult& r) {
        metrics->observe_generation(r.prompt_tokens, static_cast<std::int64_t>(r.tokens.size()), r.ttft_seconds,
                                    r.total_seconds, r.stop_reason == ember::StopReason::cancelled);
        {
            const std::lock_guard lock(ex->mutex);
            ex->result = r;
            ex->done = true;
        }
        ex->cv.notify_all();
    };
    ember::RequestHandle handle;
    try {
        handle = engine.submit(std::move(request));
    } catch (const ember::Error& e) {
        throw RequestError(400, e.what());
    }

    const ResponseMeta meta{route_make_id(state, chat), static_cast<std::int64_t>(std::time(nullptr)),
                            cr.model.empty() ? state.model_id : cr.model, chat};
    const auto deadline = Clock::now() + std::chrono::seconds(state.options.timeout);
    ServerState* st = &state;

    if (!cr.stream) {
        std::unique_lock lock(ex->mutex);
        while (!ex->done) {
            ex->cv.wait_for(lock, std::chrono::milliseconds(100));
            if (!ex->done && (Clock::now() >= deadline || st->stopping.load())) {
                ex->timed_out = !st->stopping.load();
                handle.cancel();
            }
        }
        const ember::RequestResult r = ex->result;
        const bool timed_out = ex->timed_out;
        lock.unlock();
        if (r.stop_reason == ember::StopReason::error) {
            return route_error(res, 500, "generation failed: " + r.error, "server_error");
        }
        if (r.stop_reason == ember::StopReason::cancelled) {
            if (timed_out) {
                return route_error(res, 504, "the request took longer than " + std::to_string(st->options.timeout) +
                                                 " s (--timeout)", "server_error");
            }
            return route_busy(res, "the server is shutting down");
        }
        Completion c{r.text, route_finish_reason(r.stop_reason), route_usage(r), std::nullopt};
        if (cr.logprobs) c.logprobs = route_logprobs(model, r.logprobs);
        if (wants_tool_calls(cr)) split_tool_calls(tool_format(model, st->options.chat_template), c);
        res.set_content(completion_json(meta, c), "application/json");
        return;
    }

    // A stream: httplib calls the provider until it calls sink.done() or returns false (the
    // client went away); the releaser then cancels the request if it is still running.
    const bool include_usage = cr.include_usage;
    const bool with_logprobs = cr.logprobs;
    auto first = std::make_shared<bool>(true);
    auto text_offset = std::make_shared<std::size_t>(0);  // of the next streamed token's piece
    std::shared_ptr<ToolStream> tools;
    if (wants_tool_calls(cr)) tools = std::make_shared<ToolStream>(tool_format(model, state.options.chat_template));
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [ex, handle, meta, include_usage, with_logprobs, first, text_offset, deadline, st, admitted,
         tools](std::size_t, httplib::DataSink& sink) {
            std::string out;
            if (*first) {
                *first = false;
                if (meta.chat) out += stream_chunk(meta, "", "", true, include_usage);
            }
            std::unique_lock lock(ex->mutex);
            if (out.empty()) {
                ex->cv.wait_for(lock, std::chrono::seconds(1), [&] {
                    return ex->done || !ex->pending.empty() || !ex->pending_logprobs.empty();
                });
            }
            std::string text = std::move(ex->pending);
            ex->pending.clear();
            const std::vector<ember::TokenLogprobs> logprobs = std::move(ex->pending_logprobs);
            ex->pending_logprobs.clear();
            const bool done = ex->done;
            const ember::RequestResult r = done ? ex->result : ember::RequestResult{};
            if (!done && (Clock::now() >= deadline || st->stopping.load())) {
                ex->timed_out = !st->stopping.load();
                handle.cancel();
            }
            const bool timed_out = ex->timed_out;
            lock.unlock();
            const bool got_text = !text.empty();
            if (tools) text = tools->feed(text);  // holds back what may be a tool call
            if (!text.empty() || !logprobs.empty()) {
                // Tokens whose text is held back (a possible stop string, part of a character)
                // send their logprobs now and their text with a later chunk.
                std::vector<LogprobEntry> entries;
                if (with_logprobs) entries = route_logprobs(*st->model, logprobs);
                out += stream_chunk(meta, text, "", false, include_usage,
                                    {with_logprobs ? &entries : nullptr, *text_offset});
                for (const LogprobEntry& e : entries) *text_offset += e.token.size();
            }
            if (done) {
                if (r.stop_reason == ember::StopReason::error) {
                    out += stream_error("generation failed: " + r.error, "server_error");
                } else if (r.stop_reason == ember::StopReason::cancelled) {
                    out += stream_error(timed_out ? "the request took too long (--timeout)" : "the server is shutting down",
                                        "server_error");
                } else {
                    std::string finish = route_finish_reason(r.stop_reason);
                    if (tools) out += tools->finish(meta, finish, include_usage);
                    out += stream_chunk(meta, "", finish, false, include_usage);
                    if (include_usage) out += stream_usage_chunk(meta, route_usage(r));
                }
                out += stream_done();
            } else if (out.empty() && !got_text) {
                out = ": keep-alive\n\n";  // an SSE comment: finds a client that went away
            }
            // Nothing to write (text held back as a possible tool call): a write of 0 bytes
            // would end httplib's chunked response.
            if (!out.empty() && !sink.write(out.data(), out.size())) {
                ex->client_gone.store(true);
                handle.cancel();
                return false;
            }
            if (done) sink.done();
            return true;
        },
        [ex, handle](bool success) {
            if (!success) {
                ex->client_gone.store(true);
                handle.cancel();
            }
        });
}

// Label values for /metrics: the known endpoints, everything else as "other".
std::string route_endpoint_label(const std::string& path) {
    for (const char* known : {"/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/metrics"}) {
        if (path == known) return path;
    }
    return "other";
}

}  // namespace

void install_routes(httplib::Server& http, ServerState& state) {
    http.set_payload_max_length(static_cast<std::size_t>(state.options.max_body));

    http.set_pre_routing_handler([&state](const httplib::Request& req, httplib::Response& res) {
        const std::string& key = state.options.api_key;
        if (key.empty() || req.path.rfind("/v1/", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
        if (req.get_header_value("Authorization") != "Bearer " + key) {
            route_error(res, 401, "missing or wrong API key: send 'Authorization: Bearer KEY'",
                        "invalid_request_error", "", "invalid_api_key");
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });

    for (const bool chat : {true, false}) {
        http.Post(chat ? "/v1/chat/completions" : "/v1/completions",
                  [&state, chat](const httplib::Request& req, httplib::Response& res) {
                      try {
                          handle_completion(state, req, res, chat);
                      } catch (const RequestError& e) {
                          route_error(res, e.status(), e.what(), e.type(), e.param());
                      } catch (const ember::Error& e) {
                          route_error(res, 400, e.what());
                      }
                  });
    }

    http.Get("/v1/models", [&state](const httplib::Request&, httplib::Response& res) {
        const nlohmann::json body = {
            {"object", "list"},
            {"data", nlohmann::json::array({{{"id", state.model_id},
                                             {"object", "model"},
                                             {"created", state.created},
                                             {"owned_by", "ember"}}})}};
        res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
    });

    http.Get("/health", [&state](const httplib::Request&, httplib::Response& res) {
        if (state.loaded.load(std::memory_order_acquire)) {
            res.set_content(R"({"status":"ok"})", "application/json");
        } else {
            res.status = 503;
            res.set_header("Retry-After", "1");
            res.set_content(R"({"status":"loading"})", "application/json");
        }
    });

    http.Get("/metrics", [&state](const httplib::Request&, httplib::Response& res) {
        EngineGauges g;
        g.loaded = state.loaded.load(std::memory_order_acquire);
        g.waiting_http = state.in_flight.load();
        if (g.loaded) {
            const ember::EngineStats s = state.engine->stats();
            g.running = s.running;
            g.queued = s.queued;
            g.kv_pages = s.kv_pages;
            g.kv_pages_free = s.kv_pages_free;
            g.prefix_hits = s.prefix_hits;
            g.prefix_hit_tokens = s.prefix_hit_tokens;
            g.preemptions = s.preemptions;
            g.steps = s.steps;
        }
        res.set_content(state.metrics.render(g), "text/plain; version=0.0.4");
    });

    // Bodies for httplib's own errors (404, 413, 400 for a bad request line) and exceptions.
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        std::string message;
        switch (res.status) {
            case 404: message = "no route for " + req.method + " " + req.path; break;
            case 405: message = "method not allowed"; break;
            case 413: message = "the request body is larger than the limit (--max-body)"; break;
            default: message = "HTTP error " + std::to_string(res.status);
        }
        route_error(res, res.status, message, res.status >= 500 ? "server_error" : "invalid_request_error");
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
            if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = std::string("internal error: ") + e.what();
        } catch (...) {
        }
        route_error(res, 500, what, "server_error");
    });
    http.set_logger([&state](const httplib::Request& req, const httplib::Response& res) {
        state.metrics.count_request(route_endpoint_label(req.path), res.status);
    });
}

}  // namespace ember_server

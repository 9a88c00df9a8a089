#include "routes.hpp"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "ember/decoding.hpp"
#include "openai_request.hpp"
#include "openai_response.hpp"
#include "server_tools.hpp"

namespace ember_server {
namespace {

using Clock = std::chrono::steady_clock;

// What a request's generations hand from the engine's worker thread to its HTTP handler thread:
// one Choice per generation (n, or best_of candidates), under one mutex.
struct Exchange {
    struct Choice {
        std::string pending;                                 // text released and not yet sent
        std::vector<ember::TokenLogprobs> pending_logprobs;  // (stream with logprobs) not yet sent
        bool done = false;
        ember::RequestResult result;
    };
    explicit Exchange(int n) : choices(static_cast<std::size_t>(n)) {}
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<Choice> choices;
    std::size_t done_count = 0;
    std::atomic<bool> client_gone{false};
    bool timed_out = false;
};

// Holds a request's generations in ServerState::in_flight while it is admitted (for streams:
// until the stream's resources are released).
struct InFlight {
    InFlight(std::atomic<int>& n, int generations) : count(n), held(generations) {}
    ~InFlight() { count.fetch_sub(held); }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    std::atomic<int>& count;
    int held;
};

// Cancels every generation of a request.
void route_cancel(const std::vector<ember::RequestHandle>& handles) {
    for (const ember::RequestHandle& h : handles) h.cancel();
}

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

// One sampler per generation, the i-th seeded with seed + i (ember::make_samplers).
std::vector<ember::Sampler> route_samplers(const ServerState& state, const CompletionRequest& r, int n) {
    ember::SamplerOptions so = r.sampler;
    so.grammar = tool_grammar(r, tool_format(*state.model, state.options.chat_template));
    so.json_schema = r.json_schema;
    try {
        return ember::make_samplers(*state.model, so, n);
    } catch (const ember::Error& e) {
        throw RequestError(400, std::string("invalid sampling options: ") + e.what(),
                           r.json_schema.empty() ? "" : "response_format");
    }
}

// The prompt counts once, every generation's tokens count (best_of candidates too, as OpenAI
// bills them); cached tokens are the first generation's (the others share its prompt).
Usage route_usage(const std::vector<Exchange::Choice>& choices) {
    Usage u{choices.front().result.prompt_tokens, 0, choices.front().result.cached_tokens};
    for (const Exchange::Choice& c : choices) u.completion_tokens += static_cast<std::int64_t>(c.result.tokens.size());
    return u;
}

// The generations to answer with, best first: all of them in order, or (best_of > n) the n
// with the highest mean log-probability, ties to the earlier.
std::vector<std::size_t> route_pick(const std::vector<Exchange::Choice>& choices, int n) {
    std::vector<std::size_t> order(choices.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (choices.size() > static_cast<std::size_t>(n)) {
        std::vector<double> score;
        for (const Exchange::Choice& c : choices) score.push_back(ember::mean_logprob(c.result));
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });
        order.resize(static_cast<std::size_t>(n));
    }
    return order;
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

// A stream's state on httplib's provider thread: per choice, whether its first chunk went, the
// offset of its next token's text, its held-back tool calls, whether its last chunk went.
struct StreamChoice {
    bool started = false;
    bool finished = false;
    std::size_t text_offset = 0;
    std::shared_ptr<ToolStream> tools;
};

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
    // n choices (best_of candidates): one generation each, all on the one prompt, which the
    // engine prefills once and shares.
    const int generations = cr.best_of;
    const int limit = state.options.parallel + state.options.queue;
    if (generations > limit) {
        throw RequestError(400,
                           std::string(cr.best_of > cr.n ? "best_of" : "n") + " = " + std::to_string(generations) +
                               " is more generations than the server runs or queues at once (" +
                               std::to_string(limit) + ", --parallel plus --queue)",
                           cr.best_of > cr.n ? "best_of" : "n");
    }
    std::vector<ember::Sampler> samplers = route_samplers(state, cr, generations);

    // Admission: at most --parallel running plus --queue waiting generations.
    if (state.in_flight.fetch_add(generations) + generations > limit) {
        state.in_flight.fetch_sub(generations);
        return route_busy(res, "the server is busy: " + std::to_string(limit) + " generations running or queued");
    }
    auto admitted = std::make_shared<InFlight>(state.in_flight, generations);

    auto ex = std::make_shared<Exchange>(generations);
    std::vector<ember::RequestHandle> handles;
    Metrics* metrics = &state.metrics;
    for (int i = 0; i < generations; ++i) {
        ember::Request request;
        request.prompt = prompt;
        request.sampler = std::move(samplers[static_cast<std::size_t>(i)]);
        request.options.max_tokens = cr.max_tokens;
        request.options.stop = cr.stop;
        request.options.logprobs = cr.logprobs || generations > cr.n;  // best_of ranks by them
        request.options.top_logprobs = cr.top_logprobs;
        Exchange::Choice* choice = &ex->choices[static_cast<std::size_t>(i)];
        if (cr.logprobs && cr.stream) {
            request.options.on_logprobs = [ex, choice](const ember::TokenLogprobs& t) {
                const std::lock_guard lock(ex->mutex);
                choice->pending_logprobs.push_back(t);
            };
        }
        request.options.on_token = [ex, choice](ember::Token, std::string_view text) {
            if (!text.empty()) {
                const std::lock_guard lock(ex->mutex);
                choice->pending.append(text);
            }
            ex->cv.notify_all();
            return !ex->client_gone.load();
        };
        request.on_done = [ex, choice, metrics](const ember::RequestResult& r) {
            metrics->observe_generation(r.prompt_tokens, static_cast<std::int64_t>(r.tokens.size()), r.ttft_seconds,
                                        r.total_seconds, r.stop_reason == ember::StopReason::cancelled);
            {
                const std::lock_guard lock(ex->mutex);
                choice->result = r;
                choice->done = true;
                ex->done_count += 1;
            }
            ex->cv.notify_all();
        };
        try {
            handles.push_back(engine.submit(std::move(request)));
        } catch (const ember::Error& e) {
            route_cancel(handles);
            throw RequestError(400, e.what());
        }
    }

    const ResponseMeta meta{route_make_id(state, chat), static_cast<std::int64_t>(std::time(nullptr)),
                            cr.model.empty() ? state.model_id : cr.model, chat};
    const auto deadline = Clock::now() + std::chrono::seconds(state.options.timeout);
    ServerState* st = &state;
    const ember::ToolCallFormat format = tool_format(model, state.options.chat_template);
    const bool tools = wants_tool_calls(cr);

    if (!cr.stream) {
        std::unique_lock lock(ex->mutex);
        while (ex->done_count < ex->choices.size()) {
            ex->cv.wait_for(lock, std::chrono::milliseconds(100));
            if (ex->done_count < ex->choices.size() && (Clock::now() >= deadline || st->stopping.load())) {
                ex->timed_out = !st->stopping.load();
                route_cancel(handles);
            }
        }
        const std::vector<Exchange::Choice> done = ex->choices;
        const bool timed_out = ex->timed_out;
        lock.unlock();
        for (const Exchange::Choice& c : done) {
            const ember::RequestResult& r = c.result;
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
        }
        std::vector<Completion> answer;
        for (const std::size_t i : route_pick(done, cr.n)) {
            const ember::RequestResult& r = done[i].result;
            Completion c{r.text, route_finish_reason(r.stop_reason), {}, std::nullopt};
            if (cr.logprobs) c.logprobs = route_logprobs(model, r.logprobs);
            if (tools) split_tool_calls(format, c);
            answer.push_back(std::move(c));
        }
        res.set_content(completion_json(meta, answer, route_usage(done)), "application/json");
        return;
    }

    // A stream (n choices, best_of = n): httplib calls the provider until it calls sink.done()
    // or returns false (the client went away); the releaser then cancels what still runs.
    // Chunks of the choices interleave, each with its index.
    const bool include_usage = cr.include_usage;
    const bool with_logprobs = cr.logprobs;
    auto streams = std::make_shared<std::vector<StreamChoice>>(ex->choices.size());
    if (tools) {
        for (StreamChoice& sc : *streams) sc.tools = std::make_shared<ToolStream>(format);
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [ex, handles, meta, include_usage, with_logprobs, streams, deadline, st, admitted](std::size_t,
                                                                                          httplib::DataSink& sink) {
            std::string out;
            for (std::size_t i = 0; i < streams->size(); ++i) {
                StreamChoice& sc = (*streams)[i];
                if (sc.started) continue;
                sc.started = true;
                ResponseMeta m = meta;
                m.choice = i;
                if (meta.chat) out += stream_chunk(m, "", "", true, include_usage);
            }
            // What each choice has for the client now.
            struct Taken {
                std::string text;
                std::vector<ember::TokenLogprobs> logprobs;
                bool done = false;
                ember::RequestResult result;
            };
            std::vector<Taken> taken(streams->size());
            std::unique_lock lock(ex->mutex);
            const auto news = [&] {
                for (std::size_t i = 0; i < ex->choices.size(); ++i) {
                    const Exchange::Choice& c = ex->choices[i];
                    if (!c.pending.empty() || !c.pending_logprobs.empty() || (c.done && !(*streams)[i].finished)) {
                        return true;
                    }
                }
                return false;
            };
            if (out.empty()) ex->cv.wait_for(lock, std::chrono::seconds(1), news);
            for (std::size_t i = 0; i < taken.size(); ++i) {
                Exchange::Choice& c = ex->choices[i];
                taken[i].text = std::move(c.pending);
                c.pending.clear();
                taken[i].logprobs = std::move(c.pending_logprobs);
                c.pending_logprobs.clear();
                taken[i].done = c.done;
                if (c.done && !(*streams)[i].finished) taken[i].result = c.result;
            }
            const bool all_done = ex->done_count == ex->choices.size();
            if (!all_done && (Clock::now() >= deadline || st->stopping.load())) {
                ex->timed_out = !st->stopping.load();
                route_cancel(handles);
            }
            const bool timed_out = ex->timed_out;
            const std::vector<Exchange::Choice> finals = all_done ? ex->choices : std::vector<Exchange::Choice>{};
            lock.unlock();

            bool got_text = false, failed = false;
            for (std::size_t i = 0; i < taken.size() && !failed; ++i) {
                StreamChoice& sc = (*streams)[i];
                Taken& t = taken[i];
                if (sc.finished) continue;
                ResponseMeta m = meta;
                m.choice = i;
                got_text = got_text || !t.text.empty();
                if (sc.tools) t.text = sc.tools->feed(t.text);  // holds back what may be a tool call
                if (!t.text.empty() || !t.logprobs.empty()) {
                    // Tokens whose text is held back (a possible stop string, part of a
                    // character) send their logprobs now and their text with a later chunk.
                    std::vector<LogprobEntry> entries;
                    if (with_logprobs) entries = route_logprobs(*st->model, t.logprobs);
                    out += stream_chunk(m, t.text, "", false, include_usage,
                                        {with_logprobs ? &entries : nullptr, sc.text_offset});
                    for (const LogprobEntry& e : entries) sc.text_offset += e.token.size();
                }
                if (!t.done) continue;
                const ember::RequestResult& r = t.result;
                if (r.stop_reason == ember::StopReason::error) {
                    out += stream_error("generation failed: " + r.error, "server_error");
                    failed = true;
                } else if (r.stop_reason == ember::StopReason::cancelled) {
                    out += stream_error(timed_out ? "the request took too long (--timeout)" : "the server is shutting down",
                                        "server_error");
                    failed = true;
                } else {
                    std::string finish = route_finish_reason(r.stop_reason);
                    if (sc.tools) out += sc.tools->finish(m, finish, include_usage);
                    out += stream_chunk(m, "", finish, false, include_usage);
                    sc.finished = true;
                }
            }
            if (failed) route_cancel(handles);  // the stream ends with the error
            const bool end = failed || all_done;
            if (end) {
                if (!failed && include_usage) out += stream_usage_chunk(meta, route_usage(finals));
                out += stream_done();
            } else if (out.empty() && !got_text) {
                out = ": keep-alive\n\n";  // an SSE comment: finds a client that went away
            }
            // Nothing to write (text held back as a possible tool call): a write of 0 bytes
            // would end httplib's chunked response.
            if (!out.empty() && !sink.write(out.data(), out.size())) {
                ex->client_gone.store(true);
                route_cancel(handles);
                return false;
            }
            if (end) sink.done();
            return true;
        },
        [ex, handles](bool success) {
            if (!success) {
                ex->client_gone.store(true);
                route_cancel(handles);
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

// The HTTP endpoints of ember-server on cpp-httplib: the OpenAI routes, /health, /metrics,
// authentication, limits and error bodies. Every completion request goes through the one
// ember::Engine in ServerState; its handler thread waits for the result or streams it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "ember/ember.hpp"
#include "metrics.hpp"
#include "server_options.hpp"

namespace httplib {
class Server;
}

namespace ember_server {

struct ServerState {
    explicit ServerState(const Options& o) : options(o) {}
    const Options& options;
    std::string model_id;       // reported in /v1/models and responses
    std::int64_t created = 0;   // when the server started (Unix seconds)
    Metrics metrics;
    // Set by main before `loaded` becomes true, destroyed after the HTTP server stopped.
    std::unique_ptr<ember::Model> model;
    std::unique_ptr<ember::Engine> engine;
    std::atomic<bool> loaded{false};
    std::atomic<bool> stopping{false};
    std::atomic<int> in_flight{0};  // generations of admitted requests not yet answered (n, best_of)
    std::atomic<std::uint64_t> next_id{0};
    std::uint64_t id_salt = 0;      // random per process, for response ids
};

/// Installs every route and handler (auth, errors, limits, logging into the metrics).
void install_routes(httplib::Server& http, ServerState& state);

}  // namespace ember_server

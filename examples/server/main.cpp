// ember-server: an OpenAI-compatible HTTP server on one ember::Engine (continuous batching).
// Public API only (plus tools/common/cli for flags). See docs/server.md.
//
//   ember-server -m MODEL [--host 127.0.0.1] [--port 8080] [--parallel N] [-c N] [-t N]
//                [--api-key KEY] [--chat-template FILE]
//
// The listener starts first (GET /health answers 503 while the model loads, 200 after), so a
// supervisor sees the port at once. SIGINT/SIGTERM stop accepting, cancel the requests still
// running (their clients get an error) and exit with 0.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <thread>

#include "cli/args.hpp"
#include "cli/report.hpp"
#include "ember/ember.hpp"
#include "routes.hpp"
#include "server_options.hpp"

namespace {

std::string server_model_id(const ember_server::Options& o) {
    if (!o.alias.empty()) return o.alias;
    const std::size_t slash = o.model.find_last_of('/');
    return slash == std::string::npos ? o.model : o.model.substr(slash + 1);
}

int serve(const ember_server::Options& o) {
    // SIGINT and SIGTERM go to one thread that waits for them (blocked everywhere else, before
    // any thread starts); a write to a closed socket must not kill the process.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    // A file that is not a model fails here, at once and before the port is bound: the header
    // is read (as the loader reads it) without loading the weights.
    (void)ember::Model::estimate_memory(o.model);

    ember_server::ServerState state(o);
    state.model_id = server_model_id(o);
    state.created = static_cast<std::int64_t>(std::time(nullptr));
    state.id_salt = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();

    httplib::Server http;
    // Handler threads: one per request that may run or wait, and a few for /health and /metrics.
    const std::size_t workers = static_cast<std::size_t>(o.parallel + o.queue + 4);
    http.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
    // A response goes out in several writes (headers, body, chunks): with Nagle's algorithm on,
    // each later write waited for the client's delayed ACK, about 40 ms a request on a kept-alive
    // connection (httplib leaves TCP_NODELAY off by default).
    http.set_tcp_nodelay(true);
    ember_server::install_routes(http, state);

    int port = o.port;
    if (port == 0) {
        port = http.bind_to_any_port(o.host);
        if (port < 0) throw ember::Error("cannot listen on " + o.host + " (any port)");
    } else if (!http.bind_to_port(o.host, port)) {
        throw ember::Error("cannot listen on " + o.host + ":" + std::to_string(port) +
                           " (in use, or not an address of this machine)");
    }
    std::fprintf(stderr, "ember-server: listening on http://%s:%d\n", o.host.c_str(), port);
    std::fflush(stderr);

    std::atomic<bool> listener_done{false};
    std::thread listener([&] {
        http.listen_after_bind();
        listener_done.store(true);
    });
    std::thread watcher([&] {
        int sig = 0;
        sigwait(&signals, &sig);
        state.stopping.store(true);
        if (state.loaded.load(std::memory_order_acquire)) state.engine->cancel_all();
        // Let the cancelled requests answer (a stream its error event and [DONE]) before the
        // listener stops: httplib ends a chunked response unfinished once it is stopping.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
        while (state.in_flight.load() > 0 && std::chrono::steady_clock::now() < give_up) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        // stop() does nothing before the listener runs: repeat until it has returned.
        while (!listener_done.load()) {
            http.stop();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });

    int rc = 0;
    try {
        ember::ModelOptions mo;
        mo.threads = o.threads;
        mo.use_mmap = o.use_mmap;
        mo.mlock = o.mlock;
        state.model = std::make_unique<ember::Model>(ember::Model::load(o.model, mo));
        ember::EngineOptions eo;
        eo.max_sequences = o.parallel;
        eo.context = o.context;
        eo.threads = o.threads;
        eo.step_tokens = std::max(512, o.parallel);
        eo.kv_type = o.kv_type;
        eo.kv_cache_tokens = o.kv_tokens;
        state.engine = std::make_unique<ember::Engine>(*state.model, eo);
        state.loaded.store(true, std::memory_order_release);
        if (state.stopping.load()) state.engine->cancel_all();  // a signal came while loading
        std::fprintf(stderr, "ember-server: %s loaded (context %d, parallel %d)\n", state.model_id.c_str(),
                     state.engine->context(), o.parallel);
        std::fflush(stderr);
    } catch (const std::exception& e) {
        ember::cli::print_error("ember-server", e.what());
        rc = 1;
        kill(getpid(), SIGTERM);  // wakes the watcher, which stops the listener
    }
    listener.join();
    watcher.join();
    state.engine.reset();  // cancels what is left; no handler runs any more
    state.model.reset();
    if (rc == 0) std::fprintf(stderr, "ember-server: stopped\n");
    return rc;
}

}  // namespace

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-server", [&] {
        const ember_server::Options o = ember_server::parse_options(argc, argv);
        if (o.help) {
            std::fputs(ember_server::usage_text(), stdout);
            return 0;
        }
        return serve(o);
    });
}

// bench_state: the cost of session states: the model fingerprint (a hash of every byte of the
// model file, computed on the first save), then save_state and restore_state of a session
// holding N tokens (the fastest of the repetitions).
//
//   bench_state MODEL.gguf [--threads N] [--tokens 256] [--reps 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ember/ember.hpp"

namespace {

// Seconds fn() takes.
template <class Fn>
double timed(Fn&& fn) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODEL.gguf [--threads N] [--tokens N] [--reps N]\n", argv[0]);
        return 2;
    }
    int threads = 2, tokens = 256, reps = 5;
    for (int i = 2; i + 1 < argc; i += 2) {
        const int v = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--threads")) threads = v;
        else if (!std::strcmp(argv[i], "--tokens")) tokens = v;
        else if (!std::strcmp(argv[i], "--reps")) reps = v;
    }
    try {
        ember::ModelOptions mo;
        mo.threads = threads;
        std::optional<ember::Model> loaded;
        const double load_s = timed([&] { loaded.emplace(ember::Model::load(argv[1], mo)); });
        const ember::Model& model = *loaded;
        ember::SessionOptions so;
        so.context = std::max(tokens, 1);
        ember::Session session(model, so);
        std::vector<ember::Token> prompt(static_cast<std::size_t>(std::max(tokens, 1)));
        for (std::size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<ember::Token>((i * 7919) % model.n_vocab());
        if (session.prefill(prompt) != ember::Status::ok) throw ember::Error("prefill failed");

        std::vector<std::uint8_t> state;
        const double first_save = timed([&] { state = session.save_state(); });  // with the fingerprint
        double save = 1e30, restore = 1e30;  // fastest of the repetitions
        for (int r = 0; r < reps; ++r) {
            save = std::min(save, timed([&] { state = session.save_state(); }));
            restore = std::min(restore, timed([&] { session.restore_state(state); }));
        }
        const double fingerprint = first_save - save;
        const double gb = static_cast<double>(model.info().weight_bytes) / 1e9;
        std::printf("model %s: %.2f GB of weights, loaded in %.2f s, %d threads\n", argv[1], gb, load_s, threads);
        std::printf("fingerprint (first save minus a save): %.1f ms (%.1f GB/s)\n", fingerprint * 1e3,
                    fingerprint > 0 ? gb / fingerprint : 0.0);
        std::printf("state of %d tokens: %.2f MiB, save %.2f ms, restore %.2f ms (fastest of %d)\n", tokens,
                    static_cast<double>(state.size()) / (1 << 20), save * 1e3, restore * 1e3, reps);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_state: %s\n", e.what());
        return 1;
    }
}

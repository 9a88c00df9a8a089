// bench_forward: whole-model decode and prefill speed (llama-bench's tg / pp), with medians over
// interleaved repetitions and the process CPU time next to wall time (for loaded machines).
//
//   bench_forward MODEL.gguf [--threads N] [--pp 512] [--tg 64] [--reps 3] [--mode both|pp|tg]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "ember/ember.hpp"

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}
using ember::bench::median;

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODEL.gguf [--threads N] [--pp N] [--tg N] [--reps N] [--mode both|pp|tg]\n", argv[0]);
        return 2;
    }
    std::string path = argv[1], mode = "both";
    int threads = 2, pp = 512, tg = 64, reps = 3;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string k = argv[i];
        const int v = std::atoi(argv[i + 1]);
        if (k == "--threads") threads = v;
        else if (k == "--pp") pp = v;
        else if (k == "--tg") tg = v;
        else if (k == "--reps") reps = v;
        else if (k == "--mode") mode = argv[i + 1];
    }
    try {
        ember::ModelOptions mo;
        mo.threads = threads;
        const ember::Model model = ember::Model::load(path, mo);
        std::mt19937 rng(42);
        std::uniform_int_distribution<int> tok(3, static_cast<int>(model.n_vocab()) - 1);
        std::vector<ember::Token> prompt(static_cast<std::size_t>(pp));
        for (auto& t : prompt) t = tok(rng);

        ember::SessionOptions so;
        so.threads = threads;
        so.context = std::max(pp, tg + 1) + 8;
        so.batch = std::max(pp, 1);
        ember::Session session(model, so);

        std::vector<double> pp_w, pp_c, tg_w, tg_c;
        // warm-up (page in the weights)
        session.prefill(std::vector<ember::Token>(prompt.begin(), prompt.begin() + std::min(pp, 8)));
        for (int r = 0; r < reps; ++r) {
            if (mode != "tg") {
                session.reset();
                const double w0 = now(), c0 = cpu_now();
                session.prefill(prompt);
                pp_w.push_back(now() - w0);
                pp_c.push_back(cpu_now() - c0);
            }
            if (mode != "pp") {
                session.reset();
                session.decode(prompt[0]);
                const double w0 = now(), c0 = cpu_now();
                for (int i = 0; i < tg; ++i) session.decode(prompt[static_cast<std::size_t>(i + 1) % prompt.size()]);
                tg_w.push_back(now() - w0);
                tg_c.push_back(cpu_now() - c0);
            }
        }
        if (!pp_w.empty()) {
            std::printf("pp%d: %.1f tok/s (median wall %.3f s, cpu %.3f s, %d threads)\n", pp,
                        pp / median(pp_w), median(pp_w), median(pp_c), threads);
        }
        if (!tg_w.empty()) {
            std::printf("tg%d: %.2f tok/s (median wall %.3f s, cpu %.3f s, %d threads)\n", tg,
                        tg / median(tg_w), median(tg_w), median(tg_c), threads);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}

// bench_speculative: decode speed of plain decoding against speculative decoding (a draft
// model and/or prompt lookup) on the same prompt, interleaved per repetition, with medians,
// acceptance rates, and a check that every mode produced the same tokens (greedy).
//
//   bench_speculative -m TARGET.gguf [--draft DRAFT.gguf] [--lookup N] [--draft-max N]
//                     [-p PROMPT | -f FILE] [-n 128] [-r 5] [-t 2] [--temp T --seed S]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "ember/ember.hpp"

namespace {

using ember::bench::median;

struct Mode {
    std::string name;
    std::optional<ember::SpeculativeOptions> spec;
    std::vector<double> tps, rate, per_step;
    std::vector<ember::Token> first_tokens;
    bool same = true;
};

}  // namespace

int main(int argc, char** argv) {
    std::string target_path, draft_path, prompt = "Once upon a time";
    int lookup = 0, draft_max = 8, n = 128, reps = 5, threads = 2;
    float temp = 0.0f;
    std::uint64_t seed = 42;
    bool adaptive = true;
    for (ember::bench::Args args(argc, argv); args.next();) {
        const std::string a = args.flag();
        if (a == "-m") target_path = args.value();
        else if (a == "--draft") draft_path = args.value();
        else if (a == "--lookup") lookup = args.int_value();
        else if (a == "--draft-max") draft_max = args.int_value();
        else if (a == "--fixed") adaptive = false;
        else if (a == "-p") prompt = args.value();
        else if (a == "-f") prompt = args.file_value();
        else if (a == "-n") n = args.int_value();
        else if (a == "-r") reps = args.int_value();
        else if (a == "-t") threads = args.int_value();
        else if (a == "--temp") temp = std::strtof(args.value().c_str(), nullptr);
        else if (a == "--seed") seed = std::strtoull(args.value().c_str(), nullptr, 10);
        else args.usage("-m TARGET [--draft DRAFT] [--lookup N] [--draft-max N] [--fixed] "
                        "[-p PROMPT | -f FILE] [-n N] [-r REPS] [-t THREADS] [--temp T] [--seed S]");
    }
    ember::bench::Args::require(!target_path.empty(), "bench_speculative: -m TARGET is required");
    ember::ModelOptions mo;
    mo.threads = threads;
    const ember::Model target = ember::Model::load(target_path, mo);
    std::optional<ember::Model> draft;
    if (!draft_path.empty()) draft.emplace(ember::Model::load(draft_path, mo));
    const auto tokens = target.tokenize(prompt);

    std::vector<Mode> modes;
    modes.push_back({"plain", std::nullopt, {}, {}, {}, {}, true});
    if (draft) {
        ember::SpeculativeOptions so;
        so.draft = &*draft;
        so.max_draft = draft_max;
        so.adaptive = adaptive;
        modes.push_back({"draft", so, {}, {}, {}, {}, true});
    }
    if (lookup > 0) {
        ember::SpeculativeOptions so;
        so.lookup_ngram = lookup;
        so.max_draft = draft_max;
        so.adaptive = adaptive;
        modes.push_back({"lookup " + std::to_string(lookup), so, {}, {}, {}, {}, true});
    }
    std::printf("target %s, prompt %zu tokens, %d tokens, %d threads, temp %.2f, draft-max %d%s\n",
                target.info().name.c_str(), tokens.size(), n, threads, temp, draft_max, adaptive ? " (adaptive)" : "");
    for (int r = 0; r < reps; ++r) {
        for (Mode& m : modes) {  // interleaved: every mode once per repetition
            ember::SessionOptions so;
            so.context = static_cast<int>(tokens.size()) + n + 80;
            so.threads = threads;
            ember::Session s(target, so);
            ember::SamplerOptions sampling;
            sampling.temperature = temp;
            sampling.seed = seed;
            ember::Sampler sampler(sampling);
            std::optional<ember::Speculator> spec;
            if (m.spec) spec.emplace(target, *m.spec);
            s.prefill(tokens);
            ember::GenerateOptions g;
            g.max_tokens = n;
            g.speculative = spec ? &*spec : nullptr;
            const auto t0 = std::chrono::steady_clock::now();
            const auto result = s.generate(sampler, g);
            const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const double tps = static_cast<double>(result.tokens.size()) / dt;
            m.tps.push_back(tps);
            m.rate.push_back(s.metrics().acceptance_rate());
            m.per_step.push_back(s.metrics().mean_accepted_length());
            if (r == 0 && &m == &modes.front()) m.first_tokens = result.tokens;
            if (result.tokens != modes.front().first_tokens) m.same = false;
            std::printf("rep %d %-10s %7.2f tok/s  %zu tokens", r, m.name.c_str(), tps, result.tokens.size());
            if (spec) {
                std::printf("  accepted %lld/%lld (%.1f%%), %.2f per step, %lld steps",
                            static_cast<long long>(s.metrics().accepted_tokens),
                            static_cast<long long>(s.metrics().draft_tokens), 100.0 * s.metrics().acceptance_rate(),
                            s.metrics().mean_accepted_length(), static_cast<long long>(s.metrics().speculative_steps));
            }
            std::printf("\n");
            std::fflush(stdout);
        }
    }
    const double base = median(modes.front().tps);
    std::printf("\n%-10s %10s %8s %10s %9s %s\n", "mode", "tok/s", "speedup", "accepted", "per step", "same tokens");
    for (const Mode& m : modes) {
        std::printf("%-10s %10.2f %7.2fx %9.1f%% %9.2f %s\n", m.name.c_str(), median(m.tps), median(m.tps) / base,
                    100.0 * median(m.rate), median(m.per_step), m.same ? "yes" : "NO");
    }
    return 0;
}

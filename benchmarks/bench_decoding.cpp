// bench_decoding: N samples of one prompt decoded together (ember::generate_samples: the prompt
// prefilled once, its KV shared, one pass per step over N rows) against N independent sessions
// and against one lone sample, and beam search with B beams; interleaved per repetition, with
// medians, KV sharing counts and a check that the batched samples equal the independent ones.
//
//   bench_decoding -m MODEL.gguf [-p PROMPT | -f FILE] [-n 64] [-N 8] [-b 4] [-r 5] [-t 2]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "bench_stats.hpp"
#include "ember/ember.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ember::bench::median;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

ember::SamplerOptions sampling(std::uint64_t seed) {
    ember::SamplerOptions o;
    o.temperature = 0.8f;
    o.seed = seed;
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    std::string model_path;
    std::string prompt = "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
                         "sunshine. One day, she went to the park with her mom. They saw a big tree with lots of "
                         "flowers. Lily wanted to climb the tree, but her mom said it was too high.";
    int n = 64, n_samples = 8, beams = 4, reps = 5, threads = 2;
    for (ember::bench::Args args(argc, argv); args.next();) {
        const std::string a = args.flag();
        if (a == "-m") model_path = args.value();
        else if (a == "-p") prompt = args.value();
        else if (a == "-f") prompt = args.file_value();
        else if (a == "-n") n = args.int_value();
        else if (a == "-N") n_samples = args.int_value();
        else if (a == "-b") beams = args.int_value();
        else if (a == "-r") reps = args.int_value();
        else if (a == "-t") threads = args.int_value();
        else args.usage("-m MODEL [-p PROMPT | -f FILE] [-n N] [-N SAMPLES] [-b BEAMS] [-r REPS] [-t THREADS]");
    }
    ember::bench::Args::require(!model_path.empty(), "bench_decoding: -m MODEL is required");
    ember::ModelOptions mo;
    mo.threads = threads;
    const ember::Model model = ember::Model::load(model_path, mo);
    const auto tokens = model.tokenize(prompt);
    ember::SessionOptions so;
    so.context = static_cast<int>(tokens.size()) + n + 16;
    so.threads = threads;
    ember::GenerateOptions g;
    g.max_tokens = n;
    std::printf("model %s, prompt %zu tokens, %d tokens, %d samples, %d beams, %d threads\n", model.info().name.c_str(),
                tokens.size(), n, n_samples, beams, threads);

    std::vector<double> one, independent, batched, beam;
    bool same = true;
    ember::DecodingStats samples_stats, beam_stats;
    for (int r = 0; r < reps; ++r) {
        // One lone sample: prefill and generate.
        auto t0 = Clock::now();
        {
            ember::Session s(model, so);
            ember::Sampler sampler(sampling(42));
            s.prefill(tokens);
            s.generate(sampler, g);
        }
        one.push_back(since(t0));
        // N independent sessions: N prefills, N token loops.
        std::vector<std::vector<ember::Token>> want;
        t0 = Clock::now();
        for (int i = 0; i < n_samples; ++i) {
            ember::Session s(model, so);
            ember::Sampler sampler(sampling(42 + static_cast<std::uint64_t>(i)));
            s.prefill(tokens);
            want.push_back(s.generate(sampler, g).tokens);
        }
        independent.push_back(since(t0));
        // N samples together: one prefill, one pass per step over N rows.
        t0 = Clock::now();
        {
            ember::Session s(model, so);
            s.prefill(tokens);
            auto samplers = ember::make_samplers(model, sampling(42), n_samples);
            ember::SampleOptions opt;
            opt.generate = g;
            const auto res = ember::generate_samples(s, samplers, opt);
            for (int i = 0; i < n_samples; ++i) same = same && res.samples[static_cast<std::size_t>(i)].tokens == want[static_cast<std::size_t>(i)];
            samples_stats = res.stats;
        }
        batched.push_back(since(t0));
        // Beam search over the same number of tokens.
        t0 = Clock::now();
        {
            ember::Session s(model, so);
            s.prefill(tokens);
            ember::BeamSearchOptions bo;
            bo.beams = beams;
            bo.max_tokens = n;
            beam_stats = ember::beam_search(s, bo).stats;
        }
        beam.push_back(since(t0));
        std::printf("rep %d: 1 sample %.4f s, %d independent %.4f s, %d batched %.4f s, beams %d %.4f s\n", r, one.back(),
                    n_samples, independent.back(), n_samples, batched.back(), beams, beam.back());
        std::fflush(stdout);
    }
    const double base = median(one);
    std::printf("\n%-22s %10s %12s\n", "mode (medians)", "seconds", "x one sample");
    std::printf("%-22s %10.4f %12.2f\n", "1 sample", base, 1.0);
    std::printf("%-22s %10.4f %12.2f\n", (std::to_string(n_samples) + " independent").c_str(), median(independent),
                median(independent) / base);
    std::printf("%-22s %10.4f %12.2f\n", (std::to_string(n_samples) + " batched").c_str(), median(batched),
                median(batched) / base);
    std::printf("%-22s %10.4f %12.2f\n", ("beam search, " + std::to_string(beams) + " beams").c_str(), median(beam),
                median(beam) / base);
    std::printf("batched vs independent: %.2fx faster; same tokens: %s\n", median(independent) / median(batched),
                same ? "yes" : "NO");
    std::printf("KV blocks: samples shared %lld, copied %lld; beams shared %lld, copied %lld\n",
                static_cast<long long>(samples_stats.kv_blocks_shared), static_cast<long long>(samples_stats.kv_blocks_copied),
                static_cast<long long>(beam_stats.kv_blocks_shared), static_cast<long long>(beam_stats.kv_blocks_copied));
    return same ? 0 : 1;
}

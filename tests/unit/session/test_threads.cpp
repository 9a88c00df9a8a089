// Threads: one Model shared by sessions running on several std::threads gives the same tokens
// as sequential runs; seeded sampling gives the same tokens with 1 and 2 worker threads.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <thread>

#include "session_test_util.hpp"
#include "support/split_small_work.hpp"

using ember::Session;
using ember::Status;
using ember::Token;
using session_test::gopts;
using session_test::sopts;
using session_test::stories;

namespace {

const char* const kPrompts[] = {"Once upon a time", "The little dog", "Lily and Tom went to the park",
                                "One day, a big bird"};

struct Job {
    std::string prompt;
    std::uint64_t seed = 0;
};

std::vector<Job> jobs_for(int thread_index) {
    std::vector<Job> jobs;
    for (int j = 0; j < 4; ++j) {
        jobs.push_back({kPrompts[(thread_index + j) % 4], static_cast<std::uint64_t>(100 * thread_index + j)});
    }
    return jobs;
}

ember::Sampler temperature_sampler(std::uint64_t seed) {
    ember::SamplerOptions o;
    o.temperature = 0.8f;
    o.seed = seed;
    return ember::Sampler(o);
}

// Runs the jobs' sessions interleaved, one decode step of each in turn.
std::vector<std::vector<Token>> run_jobs(const ember::Model& model, const std::vector<Job>& jobs,
                                         int threads, int n_tokens) {
    std::vector<Session> sessions;
    std::vector<ember::Sampler> samplers;
    std::vector<std::vector<Token>> out(jobs.size());
    for (const Job& job : jobs) {
        sessions.emplace_back(model, sopts(128, threads));
        samplers.push_back(temperature_sampler(job.seed));
        if (sessions.back().prefill(model.tokenize(job.prompt)) != Status::ok) return {};
    }
    for (int i = 0; i < n_tokens; ++i) {
        for (std::size_t k = 0; k < sessions.size(); ++k) {
            if (sessions[k].n_past() >= sessions[k].context()) continue;
            const Token t = samplers[k].sample(sessions[k].logits());
            out[k].push_back(t);
            if (sessions[k].decode(t) != Status::ok) return {};
        }
    }
    return out;
}

}  // namespace

// scripts/test.sh runs this case alone under ThreadSanitizer, with 1 and 2 worker threads per
// session (the thread pool is ember's own code, so TSan sees all of its synchronisation).
TEST_CASE("multi-session: 4 threads x 4 sessions on one Model equal sequential runs", "[threads]") {
    const ember_test::SplitSmallWork split;  // stories260K: 2 threads really split
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    std::vector<int> thread_counts = {1, 2};
    if (const char* only = std::getenv("EMBER_TSAN_THREADS"); only && *only) thread_counts = {std::atoi(only)};
    const int n_tokens = 48;
    for (const int threads : thread_counts) {
        CAPTURE(threads);
        std::vector<std::vector<std::vector<Token>>> sequential(4), parallel(4);
        for (int t = 0; t < 4; ++t) sequential[static_cast<std::size_t>(t)] = run_jobs(model, jobs_for(t), threads, n_tokens);
        std::vector<std::thread> workers;
        for (int t = 0; t < 4; ++t) {
            workers.emplace_back([&, t] {
                parallel[static_cast<std::size_t>(t)] = run_jobs(model, jobs_for(t), threads, n_tokens);
            });
        }
        for (auto& w : workers) w.join();
        for (int t = 0; t < 4; ++t) {
            CAPTURE(t);
            REQUIRE(sequential[static_cast<std::size_t>(t)].size() == 4);
            CHECK(parallel[static_cast<std::size_t>(t)] == sequential[static_cast<std::size_t>(t)]);
        }
        // Different seeds and prompts really gave different streams.
        CHECK(sequential[0][0] != sequential[0][1]);
    }
}

TEST_CASE("seeded sampling: the same tokens and logits with 1 and 2 threads", "[threads]") {
    const ember_test::SplitSmallWork split;
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");
    std::vector<std::vector<Token>> runs;
    std::vector<std::vector<float>> final_logits;
    for (const int threads : {1, 2, 1}) {
        Session s(model, sopts(256, threads));
        REQUIRE(s.prefill(prompt) == Status::ok);
        auto sampler = temperature_sampler(42);
        const auto r = s.generate(sampler, gopts(200));
        if (r.stop_reason != ember::StopReason::max_tokens) WARN("stopped early: " << ember::to_string(r.stop_reason));
        runs.push_back(r.tokens);
        final_logits.push_back(session_test::copy_logits(s));
    }
    CHECK(runs[0].size() > 50);
    CHECK(runs[1] == runs[0]);
    CHECK(runs[2] == runs[0]);
    // Each output row is computed by one thread in a fixed order: bit-identical logits.
    CHECK(final_logits[1] == final_logits[0]);
    // Prefill in one chunk with 1 and 2 threads: bit-identical too.
    std::vector<std::vector<float>> prefill_logits;
    for (const int threads : {1, 2}) {
        ember::SessionOptions o = sopts(256, threads);
        o.logits_all = true;
        Session s(model, o);
        REQUIRE(s.prefill(model.tokenize("Once upon a time, there was a little girl named Lily.")) == Status::ok);
        std::vector<float> all;
        for (int i = 0; i < 5; ++i) all.insert(all.end(), s.logits_at(i).begin(), s.logits_at(i).end());
        prefill_logits.push_back(all);
    }
    CHECK(prefill_logits[1] == prefill_logits[0]);
}

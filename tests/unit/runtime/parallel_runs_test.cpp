// parallel_runs: every item of every job runs exactly once, in runs inside one job, with an
// n_after hint that stays inside the job; a stalled worker's range is taken over by the others;
// a lone worker's runs follow each other.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/parallel_runs.hpp"

using ember::JobRun;
using ember::parallel_runs;

namespace {

struct Seen {
    std::vector<std::vector<std::atomic<int>>> hits;  // [job][item]
    std::atomic<int> bad{0};
    std::mutex m;
    std::vector<std::pair<std::thread::id, JobRun>> runs;

    explicit Seen(const std::vector<std::int64_t>& n_items) {
        for (const std::int64_t n : n_items) hits.emplace_back(static_cast<std::size_t>(n));
    }
    void record(const JobRun& r) {
        const auto& job = hits.at(static_cast<std::size_t>(r.job));
        const auto n = static_cast<std::int64_t>(job.size());
        if (r.begin < 0 || r.begin >= r.end || r.end > n || r.n_after < 0 || r.end + r.n_after > n) {
            bad.fetch_add(1);
            return;
        }
        for (std::int64_t g = r.begin; g < r.end; ++g) hits[static_cast<std::size_t>(r.job)][static_cast<std::size_t>(g)].fetch_add(1);
        const std::lock_guard<std::mutex> lock(m);
        runs.emplace_back(std::this_thread::get_id(), r);
    }
    void check_once() {
        CHECK(bad.load() == 0);
        int wrong = 0;
        for (const auto& job : hits) {
            for (const auto& h : job) wrong += h.load() != 1 ? 1 : 0;
        }
        CHECK(wrong == 0);
    }
};

}  // namespace

TEST_CASE("parallel_runs: every item once, in runs within a job", "[parallel]") {
    const std::vector<std::vector<std::int64_t>> shapes = {
        {1}, {7}, {128}, {128, 16, 16}, {352, 352}, {3, 0, 5}, {0}, {5, 1, 2, 9}, {64, 64, 64, 64, 64, 64, 64, 64}};
    for (const auto& n_items : shapes) {
        for (const int workers : {1, 2, 3, 8, 20}) {
            for (const std::int64_t quantum : {1, 2, 4}) {
                CAPTURE(n_items, workers, quantum);
                Seen seen(n_items);
                parallel_runs(n_items.data(), static_cast<int>(n_items.size()), workers, quantum,
                                    [&](const JobRun& r) { seen.record(r); });
                seen.check_once();
            }
        }
    }
}

TEST_CASE("parallel_runs: the others take over a worker that stalls", "[parallel]") {
    const std::vector<std::int64_t> n_items = {256, 256};
    Seen seen(n_items);
    const auto caller = std::this_thread::get_id();
    std::atomic<bool> stalled{false};
    parallel_runs(n_items.data(), 2, 2, 4, [&](const JobRun& r) {
        // The first run on the pool's worker stalls long enough for the caller to finish its
        // own range and take the rest of the worker's.
        if (std::this_thread::get_id() != caller && !stalled.exchange(true)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        seen.record(r);
    });
    seen.check_once();
    // The caller started on job 0 and ran items of job 1, the worker's range, too (unless the
    // worker never got a run: then the caller ran everything).
    bool caller_ran_job1 = false;
    for (const auto& [id, r] : seen.runs) caller_ran_job1 = caller_ran_job1 || (id == caller && r.job == 1);
    CHECK(caller_ran_job1);
}

TEST_CASE("parallel_runs: a lone worker reads each job front to back, hinting the rest", "[parallel]") {
    const std::vector<std::int64_t> n_items = {100, 37};
    Seen seen(n_items);
    parallel_runs(n_items.data(), 2, 1, 4, [&](const JobRun& r) { seen.record(r); });
    seen.check_once();
    std::int64_t next[2] = {0, 0};
    int job = 0;
    for (const auto& [id, r] : seen.runs) {
        CHECK(r.job >= job);  // job 0 first, then job 1
        job = r.job;
        CHECK(r.begin == next[r.job]);  // runs in order, no jumps
        CHECK(r.n_after == n_items[static_cast<std::size_t>(r.job)] - r.end);  // the rest of the job follows
        next[r.job] = r.end;
    }
    CHECK(next[0] == 100);
    CHECK(next[1] == 37);
}

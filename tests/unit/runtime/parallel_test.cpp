// parallel_for on ember's own thread pool: every item runs once, chunks are whole grains,
// worker ids are below the thread count and never shared by two running chunks, exceptions
// come back to the caller, nested loops run inline, each calling thread has its own pool,
// sleeping workers wake up, a forked child still runs loops, and the size policy.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/parallel.hpp"

using ember::parallel_for;

namespace {

// Runs one loop and checks coverage, grain alignment and worker ids.
void check_loop(std::int64_t n, int n_threads, std::int64_t grain) {
    CAPTURE(n, n_threads, grain);
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
    std::vector<std::atomic<int>> busy(static_cast<std::size_t>(std::max(n_threads, 1)));
    std::atomic<int> bad_chunk{0}, bad_worker{0}, shared_worker{0};
    parallel_for(n, n_threads, grain, [&](std::int64_t b, std::int64_t e, int w) {
        if (w < 0 || w >= std::max(n_threads, 1)) {
            bad_worker.fetch_add(1);
            return;
        }
        if (busy[static_cast<std::size_t>(w)].fetch_add(1) != 0) shared_worker.fetch_add(1);
        if (b % grain != 0 || (e != n && e % grain != 0) || b >= e) bad_chunk.fetch_add(1);
        for (std::int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
        busy[static_cast<std::size_t>(w)].fetch_sub(1);
    });
    CHECK(bad_worker.load() == 0);
    CHECK(bad_chunk.load() == 0);
    CHECK(shared_worker.load() == 0);
    int wrong = 0;
    for (auto& h : hits) wrong += h.load() != 1 ? 1 : 0;
    CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("parallel_for: every item once, whole grains, worker ids below the thread count", "[parallel]") {
    for (const int threads : {1, 2, 3, 4, 8}) {
        for (const std::int64_t n : {1, 2, 7, 64, 1000, 4097}) {
            for (const std::int64_t grain : {1, 3, 16}) check_loop(n, threads, grain);
        }
    }
    check_loop(0, 4, 1);  // nothing to do: fn is not called
}

TEST_CASE("parallel_for: thousands of loops in a row, and loops after the workers slept", "[parallel]") {
    std::atomic<std::int64_t> sum{0};
    for (int i = 0; i < 5000; ++i) {
        parallel_for(64, 3, 1, [&](std::int64_t b, std::int64_t e, int) { sum.fetch_add(e - b); });
    }
    CHECK(sum.load() == 5000 * 64);
    for (int i = 0; i < 4; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin: workers sleep
        check_loop(100, 3, 1);
    }
}

TEST_CASE("parallel_for: an exception comes back once all chunks are done; the pool still works", "[parallel]") {
    std::atomic<int> ran{0};
    CHECK_THROWS_AS(parallel_for(100, 4, 1,
                                 [&](std::int64_t b, std::int64_t, int) {
                                     ran.fetch_add(1);
                                     if (b == 0) throw std::runtime_error("chunk 0 failed");
                                 }),
                    std::runtime_error);
    CHECK(ran.load() >= 1);
    check_loop(100, 4, 1);
}

TEST_CASE("parallel_for: a loop inside a loop runs inline as worker 0", "[parallel]") {
    std::atomic<int> inner_items{0}, inner_not_inline{0};
    parallel_for(8, 4, 1, [&](std::int64_t b, std::int64_t e, int) {
        for (std::int64_t i = b; i < e; ++i) {
            const auto self = std::this_thread::get_id();
            parallel_for(10, 4, 1, [&](std::int64_t ib, std::int64_t ie, int w) {
                if (w != 0 || std::this_thread::get_id() != self || ib != 0 || ie != 10) inner_not_inline.fetch_add(1);
                inner_items.fetch_add(static_cast<int>(ie - ib));
            });
        }
    });
    CHECK(inner_items.load() == 80);
    CHECK(inner_not_inline.load() == 0);
}

TEST_CASE("parallel_for: calling threads run loops at once, each on its own workers", "[parallel]") {
    std::vector<std::thread> callers;
    std::atomic<int> failures{0};
    for (int c = 0; c < 4; ++c) {
        callers.emplace_back([&, c] {
            for (int i = 0; i < 300; ++i) {
                const std::int64_t n = 50 + c;
                std::vector<int> hits(static_cast<std::size_t>(n), 0);  // chunks are disjoint
                parallel_for(n, 2 + c % 2, 1, [&](std::int64_t b, std::int64_t e, int) {
                    for (std::int64_t j = b; j < e; ++j) ++hits[static_cast<std::size_t>(j)];
                });
                for (int h : hits) failures.fetch_add(h != 1 ? 1 : 0);
            }
        });
    }
    for (auto& t : callers) t.join();
    CHECK(failures.load() == 0);
}

TEST_CASE("parallel_for: a forked child runs loops without the parent's workers", "[parallel]") {
#if defined(__SANITIZE_THREAD__)
    WARN("skipped under ThreadSanitizer, which ends a child that starts threads after a multi-threaded fork");
    return;
#endif
    check_loop(64, 3, 1);  // the parent's pool has workers now
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        std::atomic<std::int64_t> sum{0};
        ember::parallel_for(64, 3, 1, [&](std::int64_t b, std::int64_t e, int) { sum.fetch_add(e - b); });
        ::_exit(sum.load() == 64 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("threads_for: small work stays on one thread; hardware_threads is at least 1", "[parallel]") {
    const std::int64_t min = ember::min_parallel_bytes();
    REQUIRE(min > 0);
    CHECK(ember::threads_for(min - 1, 8) == 1);
    CHECK(ember::threads_for(3 * min, 8) == 3);
    CHECK(ember::threads_for(100 * min, 8) == 8);
    CHECK(ember::threads_for(100 * min, 1) == 1);
    ember::set_min_parallel_bytes(0);
    CHECK(ember::threads_for(1, 4) == 4);
    ember::set_min_parallel_bytes(min);
    CHECK(ember::hardware_threads() >= 1);
    CHECK(ember::resolve_threads(0) == ember::hardware_threads());
    CHECK(ember::resolve_threads(3) == 3);
}

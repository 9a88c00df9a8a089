// Threads for parallel_for: a pool of workers per calling thread, woken once per parallel loop.
//
// Why not OpenMP: a decode step runs about 110 parallel loops. libgomp spins at each barrier
// and splits work statically, so on a busy machine a descheduled thread stalls the others for
// a whole time slice at every loop (2 threads measured 25x slower than 1). It also changes
// nothing we could tune without touching the host application's OpenMP state, and
// ThreadSanitizer cannot see its synchronisation.
//
// How a loop runs: the caller publishes a job in one 64-bit word (generation, thread count,
// chunk count, next chunk). Every participant, the caller included, claims chunks by
// compare-and-swap on that word, so a chunk is run by whoever gets to it first and a worker
// that wakes late finds nothing left rather than being waited for. The caller returns once the
// chunks claimed by others are done. Idle workers spin for a short while (loops follow each
// other within microseconds during a forward pass), then sleep on a futex (std::atomic::wait).
#include "runtime/parallel.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ember {
namespace {

// ---- the job word: gen:32 | workers-1:8 | chunks:12 | next:12 ---------------------------------
constexpr int kMaxWorkers = 256;
constexpr std::int64_t kChunksPerWorker = 4;
constexpr std::uint64_t kFieldMask = 0xFFF;

constexpr std::uint64_t make_word(std::uint32_t gen, int workers, std::uint64_t chunks) {
    return (std::uint64_t{gen} << 32) | (static_cast<std::uint64_t>(workers - 1) << 24) | (chunks << 12);
}
constexpr std::uint32_t word_gen(std::uint64_t w) { return static_cast<std::uint32_t>(w >> 32); }
constexpr int word_workers(std::uint64_t w) { return static_cast<int>((w >> 24) & 0xFF) + 1; }
constexpr std::uint64_t word_chunks(std::uint64_t w) { return (w >> 12) & kFieldMask; }
constexpr std::uint64_t word_next(std::uint64_t w) { return w & kFieldMask; }
static_assert(kMaxWorkers * kChunksPerWorker <= static_cast<std::int64_t>(kFieldMask));

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

using Clock = std::chrono::steady_clock;

// How long an idle thread spins before it sleeps (EMBER_SPIN_US, default 100 us; 0: never).
Clock::duration spin_budget() {
    static const Clock::duration budget = [] {
        long us = 100;
        if (const char* env = std::getenv("EMBER_SPIN_US"); env != nullptr && *env != '\0') {
            char* end = nullptr;
            const long v = std::strtol(env, &end, 10);
            if (end != env && *end == '\0' && v >= 0 && v <= 1000000) us = v;
        }
        return std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds(us));
    }();
    return budget;
}

// Spins until pred() holds or the spin budget is spent; returns pred().
template <class Pred>
bool spin_until(Pred pred) {
    if (pred()) return true;
    const Clock::duration budget = spin_budget();
    if (budget.count() == 0) return false;
    const Clock::time_point until = Clock::now() + budget;
    for (int i = 1;; ++i) {
        cpu_relax();
        if (pred()) return true;
        if ((i & 63) == 0 && Clock::now() >= until) return pred();
    }
}

thread_local bool tl_inside_parallel = false;  // nested parallel_for runs inline

// Pools left behind by fork(): the child has none of their threads.
std::atomic<std::uint32_t> g_fork_epoch{0};
std::once_flag g_atfork_once;

class Pool {
public:
    Pool() {
        std::call_once(g_atfork_once, [] {
            ::pthread_atfork(nullptr, nullptr, [] { g_fork_epoch.fetch_add(1, std::memory_order_relaxed); });
        });
        epoch_ = g_fork_epoch.load(std::memory_order_relaxed);
    }
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    ~Pool() {
        stop_.store(true, std::memory_order_seq_cst);
        wake_.fetch_add(1, std::memory_order_seq_cst);
        wake_.notify_all();
        for (auto& t : threads_) t.join();
    }

    void run(std::int64_t n, std::int64_t grain, int workers, detail::ChunkFn fn, void* ctx) {
        if (g_fork_epoch.load(std::memory_order_relaxed) != epoch_) abandon_after_fork();
        workers = ensure_threads(workers - 1) + 1;
        if (workers <= 1) {
            fn(ctx, 0, n, 0);
            return;
        }
        const std::int64_t n_grains = (n + grain - 1) / grain;
        const auto chunks = static_cast<std::uint64_t>(std::min<std::int64_t>(n_grains, workers * kChunksPerWorker));
        fn_ = fn;
        ctx_ = ctx;
        n_ = n;
        grain_ = grain;
        n_grains_ = n_grains;
        error_ = nullptr;
        failed_.store(false, std::memory_order_relaxed);
        done_.store(0, std::memory_order_relaxed);
        const std::uint32_t gen = ++gen_;
        claim_.store(make_word(gen, workers, chunks), std::memory_order_seq_cst);
        if (sleepers_.load(std::memory_order_seq_cst) > 0) {
            wake_.fetch_add(1, std::memory_order_seq_cst);
            wake_.notify_all();
        }
        work(0, gen);
        wait_done(static_cast<std::uint32_t>(chunks));
        if (failed_.load(std::memory_order_acquire)) std::rethrow_exception(error_);
    }

private:
    // Starts workers up to n_workers; returns how many there are (fewer when the system
    // refuses more threads: the loop then runs on those it has).
    int ensure_threads(int n_workers) {
        try {
            while (static_cast<int>(threads_.size()) < n_workers) {
                const int slot = static_cast<int>(threads_.size()) + 1;
                threads_.emplace_back([this, slot] { worker_main(slot); });
            }
        } catch (const std::system_error&) {
        }
        return std::min(n_workers, static_cast<int>(threads_.size()));
    }

    // After fork() the child's std::thread objects name threads that do not exist: forget
    // them (never joined, never destroyed) and start afresh.
    void abandon_after_fork() {
        new std::vector<std::thread>(std::move(threads_));  // leaked on purpose
        threads_.clear();
        epoch_ = g_fork_epoch.load(std::memory_order_relaxed);
    }

    void worker_main(int slot) {
#if defined(__linux__)
        ::pthread_setname_np(::pthread_self(), "ember-worker");
#endif
        tl_inside_parallel = true;
        std::uint32_t seen = 0;
        for (;;) {
            const std::uint64_t w = wait_for_job(seen);
            if (stop_.load(std::memory_order_acquire)) return;
            seen = word_gen(w);
            if (slot < word_workers(w)) work(slot, seen);
        }
    }

    // Returns the job word once its generation differs from `seen` (or the pool stops).
    std::uint64_t wait_for_job(std::uint32_t seen) {
        std::uint64_t w = 0;
        const auto ready = [&] {
            w = claim_.load(std::memory_order_acquire);
            return word_gen(w) != seen || stop_.load(std::memory_order_relaxed);
        };
        if (spin_until(ready)) return w;
        for (;;) {
            const std::uint32_t ticket = wake_.load(std::memory_order_seq_cst);
            sleepers_.fetch_add(1, std::memory_order_seq_cst);
            w = claim_.load(std::memory_order_seq_cst);
            if (word_gen(w) != seen || stop_.load(std::memory_order_seq_cst)) {
                sleepers_.fetch_sub(1, std::memory_order_relaxed);
                return w;
            }
            wake_.wait(ticket, std::memory_order_seq_cst);
            sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
    }

    // Claims and runs chunks of job `gen` until none is left.
    void work(int slot, std::uint32_t gen) {
        const bool was_inside = std::exchange(tl_inside_parallel, true);
        std::uint64_t w = claim_.load(std::memory_order_acquire);
        while (word_gen(w) == gen && word_next(w) < word_chunks(w)) {
            if (!claim_.compare_exchange_weak(w, w + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
            run_chunk(static_cast<std::int64_t>(word_next(w)), static_cast<std::int64_t>(word_chunks(w)), slot);
            const std::uint32_t chunks = static_cast<std::uint32_t>(word_chunks(w));
            if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == chunks &&
                caller_sleeping_.load(std::memory_order_seq_cst)) {
                done_.notify_all();
            }
            w = claim_.load(std::memory_order_acquire);
        }
        tl_inside_parallel = was_inside;
    }

    void run_chunk(std::int64_t c, std::int64_t chunks, int slot) noexcept {
        const std::int64_t per = n_grains_ / chunks, extra = n_grains_ % chunks;
        const std::int64_t g0 = c * per + std::min(c, extra);
        const std::int64_t g1 = g0 + per + (c < extra ? 1 : 0);
        const std::int64_t begin = g0 * grain_, end = std::min(n_, g1 * grain_);
        if (failed_.load(std::memory_order_relaxed) || begin >= end) return;
        try {
            fn_(ctx_, begin, end, slot);
        } catch (...) {
            if (!failed_.exchange(true, std::memory_order_acq_rel)) error_ = std::current_exception();
        }
    }

    void wait_done(std::uint32_t chunks) {
        if (spin_until([&] { return done_.load(std::memory_order_acquire) == chunks; })) return;
        caller_sleeping_.store(true, std::memory_order_seq_cst);
        for (;;) {
            const std::uint32_t v = done_.load(std::memory_order_seq_cst);
            if (v == chunks) break;
            done_.wait(v, std::memory_order_seq_cst);
        }
        caller_sleeping_.store(false, std::memory_order_relaxed);
    }

    // Written by the caller before a job is published, read by workers after they claim a chunk.
    detail::ChunkFn fn_ = nullptr;
    void* ctx_ = nullptr;
    std::int64_t n_ = 0, grain_ = 1, n_grains_ = 0;
    std::exception_ptr error_;
    std::uint32_t gen_ = 0;
    std::uint32_t epoch_ = 0;
    std::vector<std::thread> threads_;

    alignas(64) std::atomic<std::uint64_t> claim_{0};
    alignas(64) std::atomic<std::uint32_t> done_{0};
    std::atomic<bool> caller_sleeping_{false};
    std::atomic<bool> failed_{false};
    alignas(64) std::atomic<std::uint32_t> wake_{0};
    std::atomic<int> sleepers_{0};
    std::atomic<bool> stop_{false};
};

Pool& this_threads_pool() {
    thread_local Pool pool;
    return pool;
}

std::atomic<std::int64_t> g_min_parallel_bytes{128 * 1024};

// ---- default thread count --------------------------------------------------------------------

std::string read_line(const std::string& path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

// CPUs allowed by a cgroup v2 quota ("max 100000" or "200000 100000"), or 0 when unlimited.
int cgroup_cpu_limit() {
    const std::string s = read_line("/sys/fs/cgroup/cpu.max");
    long long quota = 0, period = 0;
    if (s.empty() || s.rfind("max", 0) == 0) return 0;
    if (std::sscanf(s.c_str(), "%lld %lld", &quota, &period) != 2 || quota <= 0 || period <= 0) return 0;
    return static_cast<int>(std::max<long long>(1, (quota + period - 1) / period));
}

int count_default_threads() {
    int n = 0;
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) {
        std::set<std::pair<std::string, std::string>> cores;  // (package, core) of allowed CPUs
        int allowed = 0;
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
            if (!CPU_ISSET(cpu, &set)) continue;
            ++allowed;
            const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
            const std::string core = read_line(dir + "core_id");
            cores.emplace(read_line(dir + "physical_package_id"), core.empty() ? std::to_string(cpu) : core);
        }
        n = cores.empty() ? allowed : static_cast<int>(cores.size());
    }
#endif
    if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
    if (const int quota = cgroup_cpu_limit(); quota > 0) n = std::min(n, quota);
    return std::max(n, 1);
}

}  // namespace

int hardware_threads() noexcept {
    static const int n = [] {
        try {
            return count_default_threads();
        } catch (...) {
            return 1;
        }
    }();
    return n;
}

std::int64_t min_parallel_bytes() noexcept { return g_min_parallel_bytes.load(std::memory_order_relaxed); }
void set_min_parallel_bytes(std::int64_t bytes) noexcept {
    g_min_parallel_bytes.store(std::max<std::int64_t>(bytes, 0), std::memory_order_relaxed);
}

namespace detail {

void run_parallel(std::int64_t n, std::int64_t grain, int workers, ChunkFn fn, void* ctx) {
    workers = std::min(workers, kMaxWorkers);
    if (tl_inside_parallel || workers <= 1) {
        fn(ctx, 0, n, 0);
        return;
    }
    this_threads_pool().run(n, grain, workers, fn, ctx);
}

}  // namespace detail
}  // namespace ember

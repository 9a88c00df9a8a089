#include "runtime/parallel_runs.hpp"

#include <algorithm>
#include <atomic>
#include <memory>

#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"

namespace ember {
namespace {

// A worker's range of items [front, back) in one word: front << 32 | back.
struct alignas(64) Range {
    std::atomic<std::uint64_t> bounds{0};
};

constexpr std::uint64_t pack(std::int64_t front, std::int64_t back) {
    return (static_cast<std::uint64_t>(front) << 32) | static_cast<std::uint64_t>(back);
}
constexpr std::int64_t front_of(std::uint64_t r) { return static_cast<std::int64_t>(r >> 32); }
constexpr std::int64_t back_of(std::uint64_t r) { return static_cast<std::int64_t>(r & 0xFFFFFFFFu); }

std::int64_t round_up(std::int64_t n, std::int64_t quantum) { return (n + quantum - 1) / quantum * quantum; }

// Ranges up to this many workers live on the stack.
constexpr int kStackRanges = 16;

}  // namespace

void parallel_runs(const std::int64_t* n_items, int n_jobs, int workers, std::int64_t quantum,
                   void (*run)(void* ctx, const JobRun& r), void* ctx) {
    EMBER_ASSERT(n_jobs >= 1 && n_jobs <= kMaxRunJobs && workers >= 1);
    quantum = std::max<std::int64_t>(quantum, 1);
    std::int64_t first[kMaxRunJobs + 1] = {0};  // job j's items are [first[j], first[j + 1])
    for (int j = 0; j < n_jobs; ++j) {
        EMBER_ASSERT(n_items[j] >= 0 && n_items[j] < (std::int64_t{1} << 31));
        first[j + 1] = first[j] + n_items[j];
    }
    const std::int64_t total = first[n_jobs];
    EMBER_ASSERT(total < (std::int64_t{1} << 31));
    if (total == 0) return;

    Range stack_ranges[kStackRanges];
    std::unique_ptr<Range[]> heap_ranges;
    Range* ranges = stack_ranges;
    if (workers > kStackRanges) {
        heap_ranges = std::make_unique<Range[]>(static_cast<std::size_t>(workers));
        ranges = heap_ranges.get();
    }
    const std::int64_t quanta = (total + quantum - 1) / quantum;
    for (int w = 0; w < workers; ++w) {
        const std::int64_t f = std::min(total, quanta * w / workers * quantum);
        const std::int64_t b = std::min(total, quanta * (w + 1) / workers * quantum);
        ranges[w].bounds.store(pack(f, b), std::memory_order_relaxed);
    }
    const auto job_of = [&](std::int64_t g) {
        int j = 0;
        while (g >= first[j + 1]) ++j;
        return j;
    };
    // Moves the back half of the fullest other range to `mine` (empty); false when all are empty.
    const auto steal = [&](std::atomic<std::uint64_t>& mine) {
        for (;;) {
            int victim = -1;
            std::int64_t most = 0;
            for (int w = 0; w < workers; ++w) {
                const std::uint64_t r = ranges[w].bounds.load(std::memory_order_relaxed);
                if (back_of(r) - front_of(r) > most) most = back_of(r) - front_of(r), victim = w;
            }
            if (victim < 0) return false;
            std::uint64_t r = ranges[victim].bounds.load(std::memory_order_relaxed);
            const std::int64_t f = front_of(r), b = back_of(r);
            if (f >= b) continue;
            const std::int64_t s = std::max(f, b - round_up((b - f + 1) / 2, quantum));
            if (ranges[victim].bounds.compare_exchange_strong(r, pack(f, s), std::memory_order_acq_rel,
                                                              std::memory_order_relaxed)) {
                mine.store(pack(s, b), std::memory_order_release);
                return true;
            }
        }
    };
    parallel_for(workers, workers, 1, [&](std::int64_t, std::int64_t, int slot) {
        // slot < workers (parallel_for). A thread that runs a second chunk of this loop (another
        // thread was late) finds its range empty and steals.
        EMBER_ASSERT(slot >= 0 && slot < workers);
        std::atomic<std::uint64_t>& mine = ranges[slot].bounds;
        do {
            std::uint64_t r = mine.load(std::memory_order_acquire);
            while (front_of(r) < back_of(r)) {
                const std::int64_t f = front_of(r), b = back_of(r);
                const int j = job_of(f);
                const std::int64_t e = std::min({b, first[j + 1], f + std::max(quantum, round_up((b - f) / 4, quantum))});
                if (!mine.compare_exchange_weak(r, pack(e, b), std::memory_order_acq_rel, std::memory_order_acquire)) {
                    continue;
                }
                run(ctx, JobRun{j, f - first[j], e - first[j], std::min(b, first[j + 1]) - e});
                r = mine.load(std::memory_order_acquire);
            }
        } while (steal(mine));
    });
}

}  // namespace ember

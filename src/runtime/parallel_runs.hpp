// parallel_runs: a loop over the items of a few jobs (the row groups of decode's matrices) in
// which each thread reads a contiguous range, for loops whose bodies prefetch ahead of the items
// in hand and so want to know what their thread reads next.
#pragma once

#include <cstdint>
#include <type_traits>

namespace ember {

/// Items [begin, end) of job `job` for one thread, and how many items of that job follow `end`
/// in the range the thread goes on with (where nobody takes them first).
struct JobRun {
    int job;
    std::int64_t begin, end, n_after;
};

/// Most jobs parallel_runs takes at once.
inline constexpr int kMaxRunJobs = 8;

/// Runs run(ctx, r) for runs r that together cover every item of n_jobs jobs (job j has
/// n_items[j]) exactly once, on up to `workers` threads (parallel_for); each run lies within one
/// job and holds whole multiples of `quantum` items where the job allows.
///
/// The items, numbered through the jobs in order, start as one contiguous range a worker, cut at
/// multiples of `quantum`. A worker takes runs from the front of its own range, a quarter of
/// what is left of it at a time (at least a quantum), so what it reads next follows what it read
/// last. A worker whose range is empty moves the back half of the fullest range to its own: one
/// the OS deschedules holds up the others for at most the run in its hands. Every claim is one
/// compare-and-swap on the owner's cache line rather than on a counter all threads share (a line
/// takes ~460 ns between the reference VM's two vCPUs).
void parallel_runs(const std::int64_t* n_items, int n_jobs, int workers, std::int64_t quantum,
                   void (*run)(void* ctx, const JobRun& r), void* ctx);

template <class Fn>
void parallel_runs(const std::int64_t* n_items, int n_jobs, int workers, std::int64_t quantum, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    parallel_runs(n_items, n_jobs, workers, quantum, [](void* ctx, const JobRun& r) { (*static_cast<F*>(ctx))(r); },
                  const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace ember

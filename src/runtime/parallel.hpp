// Threads: every parallel loop in ember goes through parallel_for, with an explicit thread
// count. The workers are ember's own (runtime/thread_pool.cpp), never OpenMP's, so nothing here
// touches the host application's OpenMP state, and ThreadSanitizer sees every synchronisation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace ember {

/// Threads a session uses when none is asked for (ModelOptions/SessionOptions::threads == 0):
/// the physical cores this process may run on (affinity mask, SMT siblings counted once, a
/// cgroup CPU quota respected), at least 1. See docs/threads.md for why not all hardware threads.
int hardware_threads() noexcept;

/// Resolves a requested thread count: <= 0 means hardware_threads().
inline int resolve_threads(int requested) noexcept {
    return requested > 0 ? requested : hardware_threads();
}

/// Work, in bytes moved (weights streamed, keys and values read, ...), below which a second
/// thread costs more than it saves: waking it and joining it take about a microsecond, in which
/// one core streams some 20 KB. threads_for() gives each thread at least this much.
/// Tests set it to 0 (set_min_parallel_bytes) so that tiny models still split their work.
std::int64_t min_parallel_bytes() noexcept;
void set_min_parallel_bytes(std::int64_t bytes) noexcept;

/// How many of `n_threads` threads a loop over `work_bytes` of data is worth (>= 1).
inline int threads_for(std::int64_t work_bytes, int n_threads) noexcept {
    const std::int64_t min = min_parallel_bytes();
    if (n_threads <= 1) return 1;
    if (min <= 0) return n_threads;
    return static_cast<int>(std::clamp<std::int64_t>(work_bytes / min, 1, n_threads));
}

namespace detail {
using ChunkFn = void (*)(void* ctx, std::int64_t begin, std::int64_t end, int worker);
/// Runs fn over [0, n) in chunks of whole grains on `workers` threads (the caller is one).
void run_parallel(std::int64_t n, std::int64_t grain, int workers, ChunkFn fn, void* ctx);
}  // namespace detail

/// Runs fn(begin, end, worker) over [0, n) split into contiguous chunks that are multiples of
/// `grain` items (except the last), on at most `n_threads` threads: the calling thread and
/// workers of a pool that belongs to it. `worker` < n_threads identifies the thread running the
/// chunk (for per-thread scratch); which chunk runs where varies from call to call, so results
/// must not depend on it. Chunks are claimed dynamically: a worker that the OS deschedules does
/// not hold up the rest. A call from inside a parallel_for body runs inline as worker 0.
/// An exception thrown by fn is rethrown here once every started chunk has finished.
template <class Fn>
void parallel_for(std::int64_t n, int n_threads, std::int64_t grain, Fn&& fn) {
    if (n <= 0) return;
    grain = std::max<std::int64_t>(grain, 1);
    const std::int64_t n_grains = (n + grain - 1) / grain;
    const int workers = static_cast<int>(std::min<std::int64_t>(std::max(n_threads, 1), n_grains));
    if (workers <= 1) {
        fn(std::int64_t{0}, n, 0);
        return;
    }
    using F = std::remove_reference_t<Fn>;
    detail::run_parallel(n, grain, workers,
                         [](void* ctx, std::int64_t b, std::int64_t e, int w) { (*static_cast<F*>(ctx))(b, e, w); },
                         const_cast<void*>(static_cast<const void*>(&fn)));
}

}  // namespace ember

// Threads: every parallel loop in ember goes through here, with an explicit thread count
// (never omp_set_num_threads, which would change the host application's OpenMP state).
#pragma once

#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace ember {

/// Hardware threads available to this process.
int hardware_threads() noexcept;

/// Resolves a requested thread count: <= 0 means all hardware threads.
inline int resolve_threads(int requested) noexcept {
    return requested > 0 ? requested : hardware_threads();
}

/// Runs fn(begin, end, worker) over [0, n) split into contiguous chunks, one per worker, on
/// `n_threads` OpenMP threads. Chunks are multiples of `grain` (except the last).
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
#pragma omp parallel num_threads(workers)
    {
        const int w = omp_get_thread_num();
        const std::int64_t per = n_grains / workers, extra = n_grains % workers;
        const std::int64_t g0 = w * per + std::min<std::int64_t>(w, extra);
        const std::int64_t g1 = g0 + per + (w < extra ? 1 : 0);
        const std::int64_t begin = g0 * grain, end = std::min(n, g1 * grain);
        if (begin < end) fn(begin, end, w);
    }
}

}  // namespace ember

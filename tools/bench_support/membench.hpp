// Memory read bandwidth, measured the way decode uses memory: every thread streams through its
// own slice of a buffer much larger than the last-level cache. The ceiling for decode speed.
#pragma once

#include <cstddef>

namespace ember {

struct BandwidthMeasure {
    double bytes_per_second = 0.0;  ///< Best pass.
    double median_bytes_per_second = 0.0;
    std::size_t buffer_bytes = 0;
    int threads = 0;
};

/// Allocates `buffer_bytes` (each thread first-touches its slice), then times `passes` passes on
/// `n_threads` threads, each reading the buffer as one stream a thread and as two (the slices'
/// halves side by side), each plainly and with lines prefetched 4 KiB ahead (as the decode
/// kernels read), with the widest loads the CPU has; a pass counts its fastest read. Throws ember::Error when the buffer cannot be
/// allocated.
BandwidthMeasure measure_read_bandwidth(std::size_t buffer_bytes, int n_threads, int passes = 5);

/// The largest cache of this CPU in bytes (the last level, shared), from sysfs or sysconf; 0 when
/// neither says.
std::size_t last_level_cache_bytes();

/// A buffer size that streams from memory rather than a cache: at least `at_least` and at least 4x
/// the last-level cache. A server's cache can hold hundreds of MiB (260 MiB on an Intel Xeon VM,
/// where a 256 MiB read pass ran 7% faster at two threads than 1 or 2 GiB did).
std::size_t beyond_cache_bytes(std::size_t at_least);

}  // namespace ember

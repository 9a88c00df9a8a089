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

}  // namespace ember

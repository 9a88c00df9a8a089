// Memory read bandwidth, measured the way decode uses memory: every thread streams through its
// own slice of a buffer much larger than the last-level cache. The ceiling for decode speed.
#pragma once

#include <cstddef>
#include <cstdint>

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

/// Sums [p, p + n) as two streams, its halves side by side, with the widest loads the CPU has:
/// the read test's two-stream pass (its fastest on the reference VM), one thread's share.
std::uint64_t read_two_streams(const std::uint8_t* p, std::size_t n);

/// Sums n_groups groups of group_bytes from w in the one-token decode kernels' order, with no
/// arithmetic: calls of g_call groups whose streams go side by side a line at a time, each line
/// prefetched `ahead` bytes on in its stream and, past its group's end, at the same place in the
/// next call's groups (the kernels' hand-over, GroupStreams). Widest loads, as above.
std::uint64_t read_as_decode(const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups, int g_call,
                             std::size_t ahead);

/// The largest cache of this CPU in bytes (the last level, shared), from sysfs or sysconf; 0 when
/// neither says.
std::size_t last_level_cache_bytes();

/// A buffer size that streams from memory rather than a cache: at least `at_least` and at least 4x
/// the last-level cache. A server's cache can hold hundreds of MiB (260 MiB on an Intel Xeon VM,
/// where a 256 MiB read pass ran 7% faster at two threads than 1 or 2 GiB did).
std::size_t beyond_cache_bytes(std::size_t at_least);

}  // namespace ember

#include "bench_support/membench.hpp"

#include <xsimd/xsimd.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"

namespace ember {
namespace {

// How far ahead a prefetching read asks for lines: the decode kernels' distance (4 KiB), so the
// ceiling is read the way they read.
constexpr std::size_t kPrefetchAhead = 4096;

// Asks for the 64-byte lines of [p, p + bytes) kPrefetchAhead bytes on (a no-op without kPrefetch).
template <bool kPrefetch>
inline void prefetch_ahead(const void* p, std::size_t bytes) {
    if constexpr (kPrefetch) {
        for (std::size_t off = 0; off < bytes; off += 64) {
            __builtin_prefetch(static_cast<const std::uint8_t*>(p) + kPrefetchAhead + off);
        }
    }
}

// Sums the 64-bit words of [p, p + n) with four independent vector accumulators of the baseline
// SIMD width (SSE2 on x86-64, NEON on ARM64): loads dominate.
template <bool kPrefetch>
std::uint64_t read_slice(const std::uint8_t* p, std::size_t n) {
    using B = xsimd::batch<std::uint64_t>;
    constexpr std::size_t kStep = 4 * B::size * sizeof(std::uint64_t);
    const auto* w = reinterpret_cast<const std::uint64_t*>(p);
    B s0(std::uint64_t{0}), s1 = s0, s2 = s0, s3 = s0;
    for (std::size_t i = 0; i + kStep <= n; i += kStep, w += 4 * B::size) {
        prefetch_ahead<kPrefetch>(w, kStep);
        s0 += B::load_aligned(w);
        s1 += B::load_aligned(w + B::size);
        s2 += B::load_aligned(w + 2 * B::size);
        s3 += B::load_aligned(w + 3 * B::size);
    }
    return xsimd::hadd((s0 + s1) + (s2 + s3));
}

// The same words read as two streams, the slice's halves side by side: a core keeps more reads
// in flight with two streams than with one (one core of the reference Zen 5 VM read 5-20% more,
// and the K-quant decode kernels had read more than the one-stream figure).
template <bool kPrefetch>
std::uint64_t read_slice_halves(const std::uint8_t* p, std::size_t n) {
    using B = xsimd::batch<std::uint64_t>;
    constexpr std::size_t kStep = 2 * B::size * sizeof(std::uint64_t);
    const std::size_t half = n / 2 / kStep * kStep;
    const auto* w0 = reinterpret_cast<const std::uint64_t*>(p);
    const auto* w1 = reinterpret_cast<const std::uint64_t*>(p + half);
    B s0(std::uint64_t{0}), s1 = s0, s2 = s0, s3 = s0;
    for (std::size_t i = 0; i + kStep <= half; i += kStep, w0 += 2 * B::size, w1 += 2 * B::size) {
        if (i % 64 == 0) {  // each stream's next line once
            prefetch_ahead<kPrefetch>(w0, std::max<std::size_t>(kStep, 64));
            prefetch_ahead<kPrefetch>(w1, std::max<std::size_t>(kStep, 64));
        }
        s0 += B::load_aligned(w0);
        s1 += B::load_aligned(w0 + B::size);
        s2 += B::load_aligned(w1);
        s3 += B::load_aligned(w1 + B::size);
    }
    return xsimd::hadd((s0 + s1) + (s2 + s3)) + read_slice<kPrefetch>(p + 2 * half, n - 2 * half);
}

using ReadFn = std::uint64_t (*)(const std::uint8_t*, std::size_t);

// One and two streams a thread, each also with the lines prefetched 4 KiB ahead as decode's
// kernels do (an Intel Xeon core read 10.3 GB/s plainly, 14.8 prefetching, and its Q4_0 decode
// kernel streamed 14.7: without it decode read "117%" of the ceiling).
constexpr ReadFn kReads[] = {read_slice<false>, read_slice_halves<false>, read_slice<true>, read_slice_halves<true>};

}  // namespace

BandwidthMeasure measure_read_bandwidth(std::size_t buffer_bytes, int n_threads, int passes) {
    n_threads = std::max(n_threads, 1);
    passes = std::max(passes, 1);
    constexpr std::size_t kGrain = 1 << 16;
    buffer_bytes = std::max<std::size_t>(buffer_bytes / kGrain * kGrain, kGrain);
    auto* buf = static_cast<std::uint8_t*>(std::aligned_alloc(4096, buffer_bytes));
    if (buf == nullptr) fail("measure_read_bandwidth: cannot allocate " + std::to_string(buffer_bytes) + " bytes");
    const auto n = static_cast<std::int64_t>(buffer_bytes / kGrain);
    // First touch by the thread that reads the slice later (same partition).
    parallel_for(n, n_threads, 1, [&](std::int64_t b, std::int64_t e, int) {
        for (std::int64_t g = b; g < e; ++g) {
            std::uint8_t* p = buf + static_cast<std::size_t>(g) * kGrain;
            for (std::size_t i = 0; i < kGrain; ++i) p[i] = static_cast<std::uint8_t>(i * 7 + g);
        }
    });
    std::vector<double> rates;
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(n_threads), 0);
    const auto timed_pass = [&](ReadFn read) {
        const auto t0 = std::chrono::steady_clock::now();
        parallel_for(n, n_threads, 1, [&](std::int64_t b, std::int64_t e, int w) {
            const std::uint8_t* p = buf + static_cast<std::size_t>(b) * kGrain;
            sums[static_cast<std::size_t>(w)] += read(p, static_cast<std::size_t>(e - b) * kGrain);
        });
        return static_cast<double>(buffer_bytes) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (int pass = 0; pass < passes + 1; ++pass) {  // the first pass warms up
        // Each pass reads the buffer in every way of kReads; the fastest counts.
        double best = 0;
        for (ReadFn read : kReads) best = std::max(best, timed_pass(read));
        if (pass > 0) rates.push_back(best);
    }
    std::free(buf);
    std::uint64_t total = 0;
    for (auto v : sums) total += v;
    volatile std::uint64_t keep = total;  // the reads must happen
    (void)keep;
    std::sort(rates.begin(), rates.end());
    BandwidthMeasure m;
    m.bytes_per_second = rates.back();
    m.median_bytes_per_second = rates[rates.size() / 2];
    m.buffer_bytes = buffer_bytes;
    m.threads = n_threads;
    return m;
}

}  // namespace ember

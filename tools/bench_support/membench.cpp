#include "bench_support/membench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"

#include <unistd.h>

namespace ember {
namespace {

// How far ahead a prefetching read asks for lines: the decode kernels' distance (4 KiB), so the
// ceiling is read the way they read.
constexpr std::size_t kPrefetchAhead = 4096;

// One 64-byte cache line as a GCC/Clang vector: the compiler loads it with the widest registers
// the function is compiled for (one zmm, two ymm, four xmm or four NEON registers).
using Line = std::uint64_t __attribute__((vector_size(64)));

// Sums the 64-bit words of [p, p + n) as kStreams equal parts read side by side, a line of each
// per step, each line prefetched kPrefetchAhead bytes on when kPrefetch; loads dominate.
template <int kStreams, bool kPrefetch>
[[gnu::always_inline]] inline std::uint64_t read_lines(const std::uint8_t* p, std::size_t n) {
    const std::size_t part = n / kStreams / 64 * 64;
    Line sums[kStreams] = {};
    for (std::size_t i = 0; i < part; i += 64) {
        for (int k = 0; k < kStreams; ++k) {
            const std::uint8_t* q = p + static_cast<std::size_t>(k) * part + i;
            if constexpr (kPrefetch) __builtin_prefetch(q + kPrefetchAhead);
            Line line;
            __builtin_memcpy(&line, q, sizeof line);
            sums[k] += line;
        }
    }
    std::uint64_t total = 0;
    for (int k = 0; k < kStreams; ++k) {
        for (int w = 0; w < 8; ++w) total += sums[k][w];
    }
    for (std::size_t i = kStreams * part; i + 8 <= n; i += 8) {
        std::uint64_t word;
        __builtin_memcpy(&word, p + i, sizeof word);
        total += word;
    }
    return total;
}

// Load width matters to what one core reads: on an Intel Xeon VM one core read 9.9 GB/s with
// 16-byte loads and 14.7 with 64-byte ones. So x86-64 builds clone the readers for AVX-512 and
// AVX2 (chosen at load time by the CPU), as the kernels use them.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EMBER_WIDEST_LOADS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EMBER_WIDEST_LOADS
#endif

// One stream and two streams a thread (a core keeps more reads in flight with two: 5-20% more on
// the reference Zen 5 VM), each plainly and with the decode kernels' prefetch (an Intel Xeon core
// read 14.7 GB/s plainly and 16.3 with two prefetched streams, and the decode kernels, which
// prefetch, had read up to 117% of the plain figure).
EMBER_WIDEST_LOADS std::uint64_t read_one(const std::uint8_t* p, std::size_t n) { return read_lines<1, false>(p, n); }
EMBER_WIDEST_LOADS std::uint64_t read_two(const std::uint8_t* p, std::size_t n) { return read_lines<2, false>(p, n); }
EMBER_WIDEST_LOADS std::uint64_t read_one_prefetched(const std::uint8_t* p, std::size_t n) { return read_lines<1, true>(p, n); }
EMBER_WIDEST_LOADS std::uint64_t read_two_prefetched(const std::uint8_t* p, std::size_t n) { return read_lines<2, true>(p, n); }

using ReadFn = std::uint64_t (*)(const std::uint8_t*, std::size_t);
constexpr ReadFn kReads[] = {read_one, read_two, read_one_prefetched, read_two_prefetched};

}  // namespace

std::uint64_t read_two_streams(const std::uint8_t* p, std::size_t n) { return read_two(p, n); }

EMBER_WIDEST_LOADS std::uint64_t read_as_decode(const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
                                                int g_call, std::size_t ahead) {
    Line sum = {};
    const std::size_t lines = group_bytes / 64;
    for (std::int64_t g0 = 0; g0 < n_groups; g0 += g_call) {
        const int g_n = static_cast<int>(std::min<std::int64_t>(g_call, n_groups - g0));
        const std::uint8_t* call = w + static_cast<std::size_t>(g0) * group_bytes;
        for (std::size_t l = 0; l < lines; ++l) {
            std::size_t at = l * 64 + ahead;
            if (at >= group_bytes) at += static_cast<std::size_t>(g_call - 1) * group_bytes;  // the next call's
            for (int g = 0; g < g_n; ++g) {
                const std::uint8_t* q = call + static_cast<std::size_t>(g) * group_bytes;
                __builtin_prefetch(q + at);
                Line line;
                __builtin_memcpy(&line, q + l * 64, sizeof line);
                sum += line;
            }
        }
    }
    std::uint64_t total = 0;
    for (int w8 = 0; w8 < 8; ++w8) total += sum[w8];
    return total;
}

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

std::size_t last_level_cache_bytes() {
    std::size_t largest = 0;
    for (int index = 0; index < 8; ++index) {  // cpu0's caches: "48K", "2048K", "266240K"...
        std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
        std::size_t n = 0;
        char unit = 0;
        if (!(f >> n)) continue;
        f >> unit;
        const std::size_t scale = unit == 'K' ? std::size_t{1} << 10 : unit == 'M' ? std::size_t{1} << 20 : 1;
        largest = std::max(largest, n * scale);
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (largest == 0) largest = static_cast<std::size_t>(std::max(0L, sysconf(_SC_LEVEL3_CACHE_SIZE)));
#endif
    return largest;
}

std::size_t beyond_cache_bytes(std::size_t at_least) {
    return std::max(at_least, 4 * last_level_cache_bytes());
}

}  // namespace ember

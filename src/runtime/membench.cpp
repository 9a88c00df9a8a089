#include "runtime/membench.hpp"

#include <emmintrin.h>  // SSE2: part of baseline x86-64

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

// Sums 16-byte words of [p, p + n) with four independent accumulators (loads dominate).
std::uint64_t read_slice(const std::uint8_t* p, std::size_t n) {
    __m128i s0 = _mm_setzero_si128(), s1 = s0, s2 = s0, s3 = s0;
    const std::size_t n64 = n / 64 * 64;
    for (std::size_t i = 0; i < n64; i += 64) {
        s0 = _mm_add_epi64(s0, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i)));
        s1 = _mm_add_epi64(s1, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 16)));
        s2 = _mm_add_epi64(s2, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 32)));
        s3 = _mm_add_epi64(s3, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 48)));
    }
    const __m128i s = _mm_add_epi64(_mm_add_epi64(s0, s1), _mm_add_epi64(s2, s3));
    alignas(16) std::uint64_t lanes[2];
    _mm_store_si128(reinterpret_cast<__m128i*>(lanes), s);
    return lanes[0] + lanes[1];
}

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
    for (int pass = 0; pass < passes + 1; ++pass) {  // the first pass warms up
        const auto t0 = std::chrono::steady_clock::now();
        parallel_for(n, n_threads, 1, [&](std::int64_t b, std::int64_t e, int w) {
            sums[static_cast<std::size_t>(w)] +=
                read_slice(buf + static_cast<std::size_t>(b) * kGrain, static_cast<std::size_t>(e - b) * kGrain);
        });
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (pass > 0) rates.push_back(static_cast<double>(buffer_bytes) / s);
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

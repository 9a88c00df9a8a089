// Does a core keep reading memory while it computes? Streams a buffer far larger than the caches
// once per pass, doing K multiply-adds on every 64-byte line it loads (the shape of a decode
// kernel: a weight line loaded, a few vector ops on it), and the same over a 512 KiB
// window that stays in L2. If reads and arithmetic overlapped, the stream would run at
// min(read, in-L2); if a core's reads stall while it computes, at 1 / (1 / read + 1 / in-L2)
// ("serial"), where read is the K = 0 stream. Prints both and the stream against each, for
// multiply-adds and, on x86-64 with AVX-512 VNNI, for vpdpbusd (the decode kernels' op).
// Passes of each K are interleaved; medians are reported. One thread: a core's own behaviour.
//   bench_read_compute [reps=5] [MiB=beyond the caches, >= 512]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#if defined(__x86_64__)
#pragma GCC diagnostic ignored "-Wuninitialized"  // GCC 12's _mm512_reduce_add_epi32
#include <immintrin.h>
#endif

#include "bench_stats.hpp"
#include "bench_support/membench.hpp"
#include "runtime/zeroed_memory.hpp"

namespace {

using Line = std::uint32_t __attribute__((vector_size(64)));

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EMBER_WIDEST __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define EMBER_WIDEST
#endif

// K multiply-adds per line into 8 accumulators (each takes K of them per 512 bytes, in a chain, so
// the in-L2 rate falls as K grows), each line prefetched 4 KiB ahead as the decode kernels do.
// `window`: bytes wrapped over (0: all).
template <int K>
[[gnu::always_inline]] inline std::uint32_t stream(const std::uint8_t* p, std::size_t bytes, std::size_t window) {
    Line acc[8] = {};
    const Line x = Line{} + 0x01020304u;
    for (std::size_t i0 = 0; i0 < bytes; i0 += 512) {
        const std::size_t i = window != 0 ? i0 % window : i0;
        for (int l = 0; l < 8; ++l) {
            const std::uint8_t* q = p + i + 64 * l;
            __builtin_prefetch(q + 4096);
            Line v;
            __builtin_memcpy(&v, q, sizeof v);
            if constexpr (K == 0) acc[l] += v;
            for (int k = 0; k < K; ++k) acc[(l + k) & 7] = acc[(l + k) & 7] * x + v;
        }
    }
    Line s = {};
    for (const Line& a : acc) s += a;
    std::uint32_t r = 0;
    for (int w = 0; w < 16; ++w) r += s[w];
    return r;
}

EMBER_WIDEST std::uint32_t stream_k(int k, const std::uint8_t* p, std::size_t bytes, std::size_t window) {
    switch (k) {
        case 0: return stream<0>(p, bytes, window);
        case 1: return stream<1>(p, bytes, window);
        case 2: return stream<2>(p, bytes, window);
        case 4: return stream<4>(p, bytes, window);
        default: return stream<8>(p, bytes, window);
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same with K vpdpbusd a line (the decode kernels' instruction), where the CPU has AVX-512 VNNI.
template <int K>
__attribute__((target("avx512f,avx512vnni"))) std::uint32_t stream_vnni(const std::uint8_t* p, std::size_t bytes,
                                                                        std::size_t window) {
    __m512i acc[8];
    for (__m512i& a : acc) a = _mm512_setzero_si512();
    const __m512i x = _mm512_set1_epi32(0x01020304);
    for (std::size_t i0 = 0; i0 < bytes; i0 += 512) {
        const std::size_t i = window != 0 ? i0 % window : i0;
        for (int l = 0; l < 8; ++l) {
            const std::uint8_t* q = p + i + 64 * l;
            __builtin_prefetch(q + 4096);
            const __m512i v = _mm512_loadu_si512(q);
            for (int k = 0; k < K; ++k) acc[(l + k) & 7] = _mm512_dpbusd_epi32(acc[(l + k) & 7], v, x);
        }
    }
    __m512i s = acc[0];
    for (int j = 1; j < 8; ++j) s = _mm512_add_epi32(s, acc[j]);
    return static_cast<std::uint32_t>(_mm512_reduce_add_epi32(s));
}

std::uint32_t stream_vnni_k(int k, const std::uint8_t* p, std::size_t bytes, std::size_t window) {
    switch (k) {
        case 1: return stream_vnni<1>(p, bytes, window);
        case 2: return stream_vnni<2>(p, bytes, window);
        case 4: return stream_vnni<4>(p, bytes, window);
        default: return stream_vnni<8>(p, bytes, window);
    }
}
bool have_vnni() { return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni"); }
#else
std::uint32_t stream_vnni_k(int, const std::uint8_t*, std::size_t, std::size_t) { return 0; }
bool have_vnni() { return false; }
#endif

// Variant v: multiply-adds (0) or vpdpbusd (1), K ops a line.
std::uint32_t run(int v, int k, const std::uint8_t* p, std::size_t bytes, std::size_t window) {
    return v == 0 || k == 0 ? stream_k(k, p, bytes, window) : stream_vnni_k(k, p, bytes, window);
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const std::size_t bytes = ember::beyond_cache_bytes(argc > 2 ? std::size_t(std::atoll(argv[2])) << 20 : std::size_t{512} << 20) /
                              512 * 512;
    const std::size_t window = std::size_t{512} << 10;
    const auto buf = ember::allocate_zeroed_pages(bytes, "bench_read_compute");
    for (std::size_t i = 0; i < bytes; i += 64) buf.get()[i] = static_cast<std::uint8_t>(i >> 6);
    const int ks[] = {0, 1, 2, 4, 8};
    constexpr int kN = sizeof ks / sizeof ks[0];
    const int n_variants = have_vnni() ? 2 : 1;
    std::vector<double> mem[2][kN], l2[2][kN];
    std::uint32_t sink = 0;
    for (int r = 0; r < reps; ++r) {
        for (int v = 0; v < n_variants; ++v) {
            for (int j = v; j < kN; ++j) {  // K = 0 once
                double t0 = now();
                sink += run(v, ks[j], buf.get(), bytes, 0);
                mem[v][j].push_back(static_cast<double>(bytes) / (now() - t0));
                run(v, ks[j], buf.get(), window, 0);  // the window into L2
                t0 = now();
                sink += run(v, ks[j], buf.get(), bytes / 4, window);
                l2[v][j].push_back(static_cast<double>(bytes / 4) / (now() - t0));
            }
        }
    }
    using ember::bench::median;
    const double read = median(mem[0][0]);
    std::printf("bench_read_compute: 1 thread, %zu MiB from memory against a 512 KiB window in L2, %d reps\n",
                bytes >> 20, reps);
    std::printf("%-10s %-3s %12s %12s %12s %9s %9s\n", "op", "K", "memory GB/s", "in-L2 GB/s", "serial GB/s", "of read",
                "of serial");
    for (int v = 0; v < n_variants; ++v) {
        for (int j = v; j < kN; ++j) {
            const double m = median(mem[v][j]), c = median(l2[v][j]), serial = 1.0 / (1.0 / read + 1.0 / c);
            std::printf("%-10s %-3d %12.1f %12.1f %12.1f %8.0f%% %8.0f%%\n", v == 0 ? "mul-add" : "vpdpbusd", ks[j],
                        m * 1e-9, c * 1e-9, serial * 1e-9, 100.0 * m / read, 100.0 * m / serial);
        }
    }
    return sink == 12345u ? 1 : 0;
}

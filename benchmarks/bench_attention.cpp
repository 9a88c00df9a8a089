// Decode attention alone: one query row of TinyLlama's shape (32 query heads over 4 key/value
// heads of 64) against `depth` cached positions in every one of 22 layers, paged as the KV cache
// pages them (16 positions a page, head by head: keys as grids [dim][position], values as rows,
// model/kv_pool.hpp), for each KvType. Reports microseconds a token, the cache's bytes read per
// second (against the median of five read passes before them) and GFLOP/s (4 per cached value:
// the score's and the value's multiply-adds), once streaming the layers from memory and once
// re-reading one layer (cache-resident: the kernel's own rate). Passes interleave; medians.
//   bench_attention [threads=2] [reps=5] [depth=4096] [head_dim=64]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench_stats.hpp"
#include "bench_support/membench.hpp"
#include "kernels/dispatch.hpp"
#include "model/kv_type.hpp"
#include "runtime/parallel.hpp"
#include "runtime/zeroed_memory.hpp"

using namespace ember;

namespace {

constexpr std::int64_t kLayers = 22, kHeads = 32, kKvHeads = 4, kBlock = 16;

struct Cache {
    KvType type;
    std::int64_t hd;
    std::size_t row_bytes, head_bytes, page_bytes;
    std::int64_t pages_per_layer;
    std::shared_ptr<std::uint8_t> k, v;  // page g of layer l is page l * pages_per_layer + g
};

Cache make_cache(KvType type, std::int64_t hd, std::int64_t depth) {
    const std::size_t row_bytes = model::kv_row_bytes(type, kKvHeads * hd, hd);
    Cache c{type, hd, row_bytes, row_bytes / kKvHeads, row_bytes * kBlock, depth / kBlock, {}, {}};
    const std::size_t bytes = c.page_bytes * static_cast<std::size_t>(c.pages_per_layer * kLayers);
    c.k = allocate_zeroed_pages(bytes, "bench keys");
    c.v = allocate_zeroed_pages(bytes, "bench values");
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> row(kKvHeads * hd);
    for (std::int64_t r = 0; r < depth * kLayers; ++r) {  // depth is whole pages (checked in main)
        const std::size_t page = static_cast<std::size_t>(r / kBlock) * c.page_bytes;
        for (float& x : row) x = dist(rng);
        for (std::int64_t h = 0; h < kKvHeads; ++h) {
            model::kv_store_key(type, &row[static_cast<std::size_t>(h * hd)],
                                c.k.get() + page + static_cast<std::size_t>(h * kBlock) * c.head_bytes, kBlock, r % kBlock, hd);
        }
        for (float& x : row) x = dist(rng);
        for (std::int64_t h = 0; h < kKvHeads; ++h) {
            model::kv_store_row(type, &row[static_cast<std::size_t>(h * hd)],
                                c.v.get() + page + static_cast<std::size_t>(h * kBlock + r % kBlock) * c.head_bytes, hd);
        }
    }
    return c;
}

// Seconds for one token: every layer (or layer 0 kLayers times) and key/value head.
double token_seconds(const Cache& c, std::int64_t depth, bool one_layer, int n_threads, const float* q, float* out,
                     std::vector<float>& scratch, std::vector<kernels::KvRun>& runs) {
    const kernels::AttendFn fn = kernels::float_kernels().attend(c.type);
    const std::int64_t n_pages = c.pages_per_layer;
    const std::int64_t per_worker = kernels::attend_scratch_floats(kHeads / kKvHeads, depth, c.hd);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t l = 0; l < kLayers; ++l) {
        const std::size_t layer = one_layer ? 0 : static_cast<std::size_t>(l * n_pages) * c.page_bytes;
        parallel_for(kKvHeads, n_threads, 1, [&](std::int64_t begin, std::int64_t end, int worker) {
            for (std::int64_t h = begin; h < end; ++h) {
                kernels::KvRun* r = &runs[static_cast<std::size_t>(worker * n_pages)];
                for (std::int64_t p = 0; p < n_pages; ++p) {
                    const std::size_t page = layer + static_cast<std::size_t>(p) * c.page_bytes;
                    r[p] = {c.k.get() + page + static_cast<std::size_t>(h * kBlock) * c.head_bytes,
                            c.v.get() + page + static_cast<std::size_t>(h * kBlock) * c.head_bytes, kBlock, 0, kBlock};
                }
                const std::int64_t group = kHeads / kKvHeads;
                const kernels::AttendQueries qs{q + h * group * c.hd, out + h * group * c.hd, 1, group, kHeads * c.hd, &depth};
                fn(qs, c.hd, r, n_pages, c.head_bytes, 0.125f, 0.0f, &scratch[static_cast<std::size_t>(worker * per_worker)]);
            }
        });
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    const int n_threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
    const std::int64_t depth = argc > 3 ? std::atoll(argv[3]) : 4096;
    const std::int64_t hd = argc > 4 ? std::atoll(argv[4]) : 64;  // TinyLlama's head dim by default
    if (hd < 32 || hd > 256 || hd % 32 != 0) {
        std::fprintf(stderr, "head dim %lld: must be a multiple of 32 in [32, 256]\n", static_cast<long long>(hd));
        return 1;
    }
    if (n_threads < 1 || reps < 1 || depth < kBlock || depth % kBlock != 0) {
        std::fprintf(stderr, "usage: bench_attention [threads>=1] [reps>=1] [depth: a multiple of 16] [head_dim]\n");
        return 2;
    }
    std::printf("ISA %.*s, %d threads, depth %lld, %lld layers x %lld kv heads (%lld query heads) of %lld\n",
                static_cast<int>(kernels::isa_name().size()), kernels::isa_name().data(), n_threads,
                static_cast<long long>(depth), static_cast<long long>(kLayers), static_cast<long long>(kKvHeads),
                static_cast<long long>(kHeads), static_cast<long long>(hd));
    std::printf("%-5s %-7s %10s %9s %8s %9s\n", "type", "from", "us/token", "GB/s", "of read", "GFLOP/s");
    std::vector<float> q(kHeads * hd), out(kHeads * hd);
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& x : q) x = dist(rng);
    std::vector<float> scratch(static_cast<std::size_t>(n_threads * kernels::attend_scratch_floats(kHeads / kKvHeads, depth, hd)));
    std::vector<kernels::KvRun> runs(static_cast<std::size_t>(n_threads * (depth / kBlock)));
    const double flops = 4.0 * hd * kHeads * static_cast<double>(depth) * kLayers;
    for (const KvType type : {KvType::f32, KvType::f16, KvType::q8_0}) {
        const Cache c = make_cache(type, hd, depth);
        const double bytes = 2.0 * static_cast<double>(c.page_bytes * static_cast<std::size_t>(c.pages_per_layer)) * kLayers;
        const double rd =
            measure_read_bandwidth(beyond_cache_bytes(static_cast<std::size_t>(bytes)), n_threads, 5).median_bytes_per_second;
        std::vector<double> secs[2];
        for (int r = 0; r < reps; ++r) {
            for (int one = 0; one < 2; ++one) {
                secs[one].push_back(token_seconds(c, depth, one != 0, n_threads, q.data(), out.data(), scratch, runs));
            }
        }
        for (int one = 0; one < 2; ++one) {
            const double s = bench::median(secs[one]);
            std::printf("%-5s %-7s %10.0f %9.1f %7.0f%% %9.1f\n", model::kv_type_name(type), one ? "cache" : "memory",
                        s * 1e6, bytes / s / 1e9, one ? 0.0 : 100.0 * bytes / s / rd, flops / s / 1e9);
        }
        std::printf("(read pass: %.1f GB/s)\n", rd / 1e9);
    }
    return 0;
}

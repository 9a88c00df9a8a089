// Decode attention alone: one query row of TinyLlama's shape (32 query heads over 4 key/value
// heads of 64) against `depth` cached positions in every one of 22 layers, paged as the KV cache
// pages them (16 positions a page, head by head: keys as grids [dim][position], values as slabs,
// model/kv_pool.hpp), for each KvType. Reports microseconds a token, the cache's bytes read per
// second (against the median of five read passes before them) and GFLOP/s (4 per cached value:
// the score's and the value's multiply-adds), streaming the layers back to back ("memory": from
// memory only where 22 layers exceed the last-level cache, else from L3), each layer after 32 MB
// of other reads ("evicted": as in the decoder, where a layer's weights stream through the caches
// between its attention and the last; only the attention is timed), and re-reading one layer
// (cache-resident: the kernel's own rate). Passes interleave; medians. rows > 1: a prefill step's
// block of that many rows (the last positions, each reading the keys up to its own), timed as one
// step ("us/token" is then per step).
//   bench_attention [threads=2] [reps=5] [depth=4096] [head_dim=64] [rows=1]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
            model::kv_store_value(type, &row[static_cast<std::size_t>(h * hd)],
                                  c.v.get() + page + static_cast<std::size_t>(h * kBlock) * c.head_bytes, kBlock, r % kBlock, hd);
        }
    }
    return c;
}

// Bytes read between layers in the "evicted" pass: a TinyLlama Q4_0 layer's weights are ~25 MB.
constexpr std::size_t kEvictBytes = std::size_t{32} << 20;

// Reads `bytes` of `buf` from `at` on n_threads (untimed: it only pushes the caches' contents out).
std::uint64_t read_through(const std::uint8_t* buf, std::size_t at, std::size_t bytes, int n_threads) {
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(n_threads), 0);
    parallel_for(static_cast<std::int64_t>(bytes / 4096), n_threads, 16, [&](std::int64_t b, std::int64_t e, int w) {
        std::uint64_t sum = 0;
        for (std::int64_t i = b; i < e; ++i) {
            for (std::size_t off = 0; off < 4096; off += 64) {
                std::uint64_t v;
                std::memcpy(&v, buf + at + static_cast<std::size_t>(i) * 4096 + off, sizeof v);
                sum += v;
            }
        }
        sums[static_cast<std::size_t>(w)] += sum;
    });
    std::uint64_t total = 0;
    for (auto v : sums) total += v;
    return total;
}

enum class Pass { memory, evicted, cache };

// Seconds for one token: every layer (or layer 0 kLayers times) and key/value head.
// n_pos: the positions each of the step's rows reads.
double token_seconds(const Cache& c, std::int64_t depth, const std::vector<std::int64_t>& n_pos, Pass pass, int n_threads,
                     const float* q, float* out, std::vector<float>& scratch, std::vector<kernels::KvRun>& runs,
                     const std::uint8_t* evict, std::size_t evict_bytes, std::uint64_t& sink) {
    const kernels::AttendFn fn = kernels::float_kernels().attend(c.type);
    const std::int64_t n_pages = c.pages_per_layer;
    const auto rows = static_cast<std::int64_t>(n_pos.size());
    const std::int64_t per_worker = kernels::attend_scratch_floats(rows * kHeads / kKvHeads, depth, c.hd);
    double seconds = 0;
    for (std::int64_t l = 0; l < kLayers; ++l) {
        if (pass == Pass::evicted) {
            const auto slice = static_cast<std::size_t>(l) % (evict_bytes / kEvictBytes);  // whole slices in turn
            sink += read_through(evict, slice * kEvictBytes, kEvictBytes, n_threads);
        }
        const auto t0 = std::chrono::steady_clock::now();
        const std::size_t layer = pass == Pass::cache ? 0 : static_cast<std::size_t>(l * n_pages) * c.page_bytes;
        parallel_for(kKvHeads, n_threads, 1, [&](std::int64_t begin, std::int64_t end, int worker) {
            for (std::int64_t h = begin; h < end; ++h) {
                kernels::KvRun* r = &runs[static_cast<std::size_t>(worker * n_pages)];
                for (std::int64_t p = 0; p < n_pages; ++p) {
                    const std::size_t page = layer + static_cast<std::size_t>(p) * c.page_bytes;
                    r[p] = {c.k.get() + page + static_cast<std::size_t>(h * kBlock) * c.head_bytes,
                            c.v.get() + page + static_cast<std::size_t>(h * kBlock) * c.head_bytes, kBlock, 0, kBlock};
                }
                const std::int64_t group = kHeads / kKvHeads;
                const kernels::AttendQueries qs{q + h * group * c.hd, out + h * group * c.hd, rows, group, kHeads * c.hd, n_pos.data()};
                fn(qs, c.hd, r, n_pages, 0.125f, 0.0f, &scratch[static_cast<std::size_t>(worker * per_worker)]);
            }
        });
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    return seconds;
}

}  // namespace

int main(int argc, char** argv) {
    const int n_threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
    const std::int64_t depth = argc > 3 ? std::atoll(argv[3]) : 4096;
    const std::int64_t hd = argc > 4 ? std::atoll(argv[4]) : 64;  // TinyLlama's head dim by default
    const std::int64_t rows = argc > 5 ? std::atoll(argv[5]) : 1;
    if (hd < 32 || hd > 256 || hd % 32 != 0) {
        std::fprintf(stderr, "head dim %lld: must be a multiple of 32 in [32, 256]\n", static_cast<long long>(hd));
        return 1;
    }
    if (n_threads < 1 || reps < 1 || depth < kBlock || depth % kBlock != 0 || rows < 1 || rows > 64 || rows > depth) {
        std::fprintf(stderr, "usage: bench_attention [threads>=1] [reps>=1] [depth: a multiple of 16] [head_dim] [rows: 1-64]\n");
        return 2;
    }
    std::printf("ISA %.*s, %d threads, depth %lld, %lld layers x %lld kv heads (%lld query heads) of %lld, %lld row(s) a step\n",
                static_cast<int>(kernels::isa_name().size()), kernels::isa_name().data(), n_threads,
                static_cast<long long>(depth), static_cast<long long>(kLayers), static_cast<long long>(kKvHeads),
                static_cast<long long>(kHeads), static_cast<long long>(hd), static_cast<long long>(rows));
    std::printf("%-5s %-7s %10s %9s %8s %9s\n", "type", "from", "us/token", "GB/s", "of read", "GFLOP/s");
    std::vector<float> q(static_cast<std::size_t>(rows * kHeads * hd)), out(q.size());
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& x : q) x = dist(rng);
    std::vector<float> scratch(static_cast<std::size_t>(n_threads * kernels::attend_scratch_floats(rows * kHeads / kKvHeads, depth, hd)));
    std::vector<kernels::KvRun> runs(static_cast<std::size_t>(n_threads * (depth / kBlock)));
    std::vector<std::int64_t> n_pos(static_cast<std::size_t>(rows));  // the last rows positions, each up to its own
    double flops = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        n_pos[static_cast<std::size_t>(r)] = depth - rows + 1 + r;
        flops += 4.0 * hd * kHeads * static_cast<double>(n_pos[static_cast<std::size_t>(r)]) * kLayers;
    }
    const std::size_t evict_bytes = beyond_cache_bytes(std::size_t{128} << 20);
    const auto evict = allocate_zeroed_pages(evict_bytes, "bench eviction buffer");
    std::memset(evict.get(), 1, evict_bytes);
    std::uint64_t sink = 0;
    for (const KvType type : {KvType::f32, KvType::f16, KvType::q8_0}) {
        const Cache c = make_cache(type, hd, depth);
        const double bytes = 2.0 * static_cast<double>(c.page_bytes * static_cast<std::size_t>(c.pages_per_layer)) * kLayers;
        const double rd =
            measure_read_bandwidth(beyond_cache_bytes(static_cast<std::size_t>(bytes)), n_threads, 5).median_bytes_per_second;
        constexpr Pass kPasses[] = {Pass::memory, Pass::evicted, Pass::cache};
        constexpr const char* kNames[] = {"memory", "evicted", "cache"};
        std::vector<double> secs[3];
        for (int r = 0; r < reps; ++r) {
            for (int p = 0; p < 3; ++p) {
                secs[p].push_back(token_seconds(c, depth, n_pos, kPasses[p], n_threads, q.data(), out.data(), scratch, runs,
                                                evict.get(), evict_bytes, sink));
            }
        }
        for (int p = 0; p < 3; ++p) {
            const double s = bench::median(secs[p]);
            std::printf("%-5s %-7s %10.0f %9.1f %7.0f%% %9.1f\n", model::kv_type_name(type), kNames[p], s * 1e6,
                        bytes / s / 1e9, kPasses[p] == Pass::cache ? 0.0 : 100.0 * bytes / s / rd, flops / s / 1e9);
        }
        std::printf("(read pass: %.1f GB/s)\n", rd / 1e9);
    }
    volatile std::uint64_t keep = sink;  // the eviction reads must happen
    (void)keep;
    return 0;
}

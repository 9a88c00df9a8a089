// Decode attention alone: one query row of TinyLlama's shape (32 query heads over 4 key/value
// heads of 64) against `depth` cached positions in every one of 22 layers, paged as the KV cache
// pages them (16 positions a page), for each KvType. Reports microseconds a token, the cache's
// bytes read per second (against the median of five read passes before them) and GFLOP/s (4 per
// cached value: the score's and the value's multiply-adds), once streaming the layers from memory
// and once re-reading one layer (cache-resident: the kernel's own rate). "rows" lays a page out
// position by position (one head's keys row_bytes apart), "heads" head by head (contiguous).
// "keysT" (F32, x86-64 with AVX-512) is a timing prototype of a layout the cache does not have
// yet: a page's keys of one head transposed ([dim][16 positions]), so that 16 scores are one
// vector of multiply-adds with no sum across lanes, values as in "heads"; its exp is a
// polynomial, and its outputs are checked against the library's kernel before timing.
// Passes interleave layouts; medians are reported.
//   bench_attention [threads=2] [reps=5] [depth=4096]
//   bench_attention --check   (the layouts' agreement at depth 48, no timing: a ctest)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#pragma GCC diagnostic ignored "-Wuninitialized"        // GCC 12's _mm512_reduce_*_ps
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#define EMBER_BENCH_KEYS_T 1
#endif

#include "bench_stats.hpp"
#include "bench_support/membench.hpp"
#include "kernels/dispatch.hpp"
#include "model/kv_type.hpp"
#include "runtime/parallel.hpp"
#include "runtime/zeroed_memory.hpp"

using namespace ember;

namespace {

constexpr std::int64_t kLayers = 22, kHeads = 32, kKvHeads = 4, kHd = 64, kBlock = 16;

struct Cache {
    KvType type;
    std::size_t row_bytes, head_bytes, layer_bytes;
    std::shared_ptr<std::uint8_t> k, v;      // rows: page p's row u of layer l at row l * depth + p * 16 + u
    std::shared_ptr<std::uint8_t> k_h, v_h;  // heads: the same keys and values, each page head by head
    std::shared_ptr<std::uint8_t> k_t;       // keysT (F32): each page's keys of a head as [dim][position]
};

Cache make_cache(KvType type, std::int64_t depth) {
    Cache c{type, model::kv_row_bytes(type, kKvHeads * kHd, kHd), 0, 0, {}, {}, {}, {}, {}};
    c.head_bytes = c.row_bytes / kKvHeads;
    c.layer_bytes = c.row_bytes * static_cast<std::size_t>(depth);
    c.k = allocate_zeroed_pages(c.layer_bytes * kLayers, "bench keys");
    c.v = allocate_zeroed_pages(c.layer_bytes * kLayers, "bench values");
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> row(kKvHeads * kHd);
    for (std::uint8_t* base : {c.k.get(), c.v.get()}) {
        for (std::int64_t r = 0; r < depth * kLayers; ++r) {
            for (float& x : row) x = dist(rng);
            model::kv_store_row(type, row.data(), base + static_cast<std::size_t>(r) * c.row_bytes, kKvHeads * kHd);
        }
    }
    c.k_h = allocate_zeroed_pages(c.layer_bytes * kLayers, "bench keys (head-major)");
    c.v_h = allocate_zeroed_pages(c.layer_bytes * kLayers, "bench values (head-major)");
    for (std::int64_t r = 0; r < depth * kLayers; ++r) {  // depth is whole pages (checked in main)
        const std::int64_t page = r / kBlock, u = r % kBlock;
        for (std::int64_t h = 0; h < kKvHeads; ++h) {
            const std::size_t from = static_cast<std::size_t>(r) * c.row_bytes + static_cast<std::size_t>(h) * c.head_bytes;
            const std::size_t to = static_cast<std::size_t>(page) * c.row_bytes * kBlock +
                                   static_cast<std::size_t>(h * kBlock + u) * c.head_bytes;
            std::memcpy(c.k_h.get() + to, c.k.get() + from, c.head_bytes);
            std::memcpy(c.v_h.get() + to, c.v.get() + from, c.head_bytes);
        }
    }
    if (type == KvType::f32) {  // keysT: page p, head h at the "heads" offset, [dim][position]
        c.k_t = allocate_zeroed_pages(c.layer_bytes * kLayers, "bench keys (transposed)");
        const auto* k = reinterpret_cast<const float*>(c.k.get());
        auto* kt = reinterpret_cast<float*>(c.k_t.get());
        for (std::int64_t r = 0; r < depth * kLayers; ++r) {
            const std::int64_t page = r / kBlock, u = r % kBlock;
            for (std::int64_t h = 0; h < kKvHeads; ++h) {
                for (std::int64_t d = 0; d < kHd; ++d) {
                    kt[((page * kKvHeads + h) * kHd + d) * kBlock + u] = k[(r * kKvHeads + h) * kHd + d];
                }
            }
        }
    }
    return c;  // the values are random: only the layout is measured, not the content's order
}

#if EMBER_BENCH_KEYS_T
// The prototype (see the top): one key/value head, kG queries of kHd, pages of kBlock positions.
constexpr int kG = kHeads / kKvHeads;
static_assert(kHd == 64 && kBlock == 16, "the prototype is written for heads of 64 and pages of 16");

__attribute__((target("avx512f,fma"))) inline __m512 exp_poly(__m512 x) {
    const __m512 t = _mm512_mul_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(1.4426950408889634f));
    const __m512 n = _mm512_roundscale_ps(t, 0), f = _mm512_sub_ps(t, n);
    __m512 p = _mm512_set1_ps(1.3333558e-3f);
    for (const float c : {9.6181291e-3f, 5.5504109e-2f, 2.4022651e-1f, 6.9314718e-1f, 1.0f}) p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(c));
    return _mm512_scalef_ps(p, n);
}

__attribute__((target("avx512f,fma"))) void attend_keys_t(const float* q, float* out, const kernels::KvRun* runs,
                                                           std::int64_t n_pages, float scale, float* scores) {
    const std::int64_t n = n_pages * kBlock;
    for (std::int64_t p = 0; p < n_pages; ++p) {
        const float* kt = reinterpret_cast<const float*>(runs[p].k);
        if (p + 2 < n_pages) {
            for (int o = 0; o < kHd * kBlock * 4; o += 64) _mm_prefetch(reinterpret_cast<const char*>(runs[p + 2].k) + o, _MM_HINT_T0);
        }
        __m512 acc[kG];
        for (__m512& a : acc) a = _mm512_setzero_ps();
        for (int d = 0; d < kHd; ++d) {
            const __m512 k = _mm512_loadu_ps(kt + d * kBlock);
            for (int j = 0; j < kG; ++j) acc[j] = _mm512_fmadd_ps(_mm512_set1_ps(q[j * kHd + d]), k, acc[j]);
        }
        for (int j = 0; j < kG; ++j) _mm512_storeu_ps(scores + j * n + p * kBlock, _mm512_mul_ps(acc[j], _mm512_set1_ps(scale)));
    }
    float inv[kG];
    for (int j = 0; j < kG; ++j) {
        float* s = scores + j * n;
        __m512 m = _mm512_set1_ps(-INFINITY), sum = _mm512_setzero_ps();
        for (std::int64_t t = 0; t < n; t += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(s + t));
        const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(m));
        for (std::int64_t t = 0; t < n; t += 16) {
            const __m512 e = exp_poly(_mm512_sub_ps(_mm512_loadu_ps(s + t), mx));
            _mm512_storeu_ps(s + t, e);
            sum = _mm512_add_ps(sum, e);
        }
        inv[j] = 1.0f / _mm512_reduce_add_ps(sum);
    }
    for (int g = 0; g < kG; g += 4) {
        __m512 acc[4][4];
        for (auto& a : acc) {
            for (__m512& c : a) c = _mm512_setzero_ps();
        }
        for (std::int64_t p = 0; p < n_pages; ++p) {
            const float* v = reinterpret_cast<const float*>(runs[p].v);
            if (p + 2 < n_pages && g == 0) {
                for (int o = 0; o < kHd * kBlock * 4; o += 64) _mm_prefetch(reinterpret_cast<const char*>(runs[p + 2].v) + o, _MM_HINT_T0);
            }
            for (int u = 0; u < kBlock; ++u) {
                __m512 w[4];
                for (int j = 0; j < 4; ++j) w[j] = _mm512_set1_ps(scores[(g + j) * n + p * kBlock + u]);
                for (int c = 0; c < 4; ++c) {
                    const __m512 x = _mm512_loadu_ps(v + u * kHd + c * 16);
                    for (int j = 0; j < 4; ++j) acc[j][c] = _mm512_fmadd_ps(w[j], x, acc[j][c]);
                }
            }
        }
        for (int j = 0; j < 4; ++j) {
            for (int c = 0; c < 4; ++c) _mm512_storeu_ps(out + (g + j) * kHd + c * 16, _mm512_mul_ps(acc[j][c], _mm512_set1_ps(inv[g + j])));
        }
    }
}

bool have_avx512() { return __builtin_cpu_supports("avx512f"); }
#else
bool have_avx512() { return false; }
#endif

enum class Layout { rows, heads, keys_t };
const char* layout_name(Layout l) { return l == Layout::rows ? "rows" : l == Layout::heads ? "heads" : "keysT"; }

// Seconds for one token: every layer (or layer 0 `layers` times) and key/value head.
double token_seconds(const Cache& c, std::int64_t depth, Layout layout, bool one_layer, int n_threads,
                     const float* q, float* out, std::vector<float>& scratch, std::vector<kernels::KvRun>& runs) {
    const kernels::AttendFn fn = kernels::float_kernels().attend(c.type);
    const std::int64_t n_pages = (depth + kBlock - 1) / kBlock;
    const std::size_t page_bytes = c.row_bytes * kBlock;
    const std::int64_t per_worker = kernels::attend_scratch_floats(kHeads / kKvHeads, depth, kHd);
    const bool head_major = layout != Layout::rows;
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t l = 0; l < kLayers; ++l) {
        const std::size_t layer_off = one_layer ? 0 : static_cast<std::size_t>(l) * c.layer_bytes;
        parallel_for(kKvHeads, n_threads, 1, [&](std::int64_t begin, std::int64_t end, int worker) {
            for (std::int64_t h = begin; h < end; ++h) {
                kernels::KvRun* r = &runs[static_cast<std::size_t>(worker * n_pages)];
                for (std::int64_t p = 0; p < n_pages; ++p) {
                    const std::size_t off = layer_off + static_cast<std::size_t>(p) * page_bytes +
                                            static_cast<std::size_t>(h) * (head_major ? c.head_bytes * kBlock : c.head_bytes);
                    r[p] = {(layout == Layout::rows ? c.k : layout == Layout::heads ? c.k_h : c.k_t).get() + off,
                            (layout == Layout::rows ? c.v : c.v_h).get() + off, kBlock};
                }
                const std::int64_t group = kHeads / kKvHeads;
#if EMBER_BENCH_KEYS_T
                if (layout == Layout::keys_t) {
                    attend_keys_t(q + h * group * kHd, out + h * group * kHd, r, n_pages, 0.125f,
                                  &scratch[static_cast<std::size_t>(worker * per_worker)]);
                    continue;
                }
#endif
                const kernels::AttendQueries qs{q + h * group * kHd, out + h * group * kHd, 1, group, kHeads * kHd, &depth};
                fn(qs, kHd, r, n_pages, head_major ? c.head_bytes : c.row_bytes, 0.125f, 0.0f,
                   &scratch[static_cast<std::size_t>(worker * per_worker)]);
            }
        });
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    const bool check_only = argc == 2 && std::strcmp(argv[1], "--check") == 0;
    const int n_threads = argc > 1 && !check_only ? std::atoi(argv[1]) : check_only ? 1 : 2;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
    const std::int64_t depth = argc > 3 ? std::atoll(argv[3]) : check_only ? 48 : 4096;
    if (n_threads < 1 || reps < 1 || depth < kBlock || depth % kBlock != 0) {
        std::fprintf(stderr, "usage: bench_attention [threads>=1] [reps>=1] [depth: a multiple of 16]\n");
        return 2;
    }
    std::printf("ISA %.*s, %d threads, depth %lld, %lld layers x %lld kv heads (%lld query heads) of %lld\n",
                static_cast<int>(kernels::isa_name().size()), kernels::isa_name().data(), n_threads, static_cast<long long>(depth),
                static_cast<long long>(kLayers), static_cast<long long>(kKvHeads), static_cast<long long>(kHeads),
                static_cast<long long>(kHd));
    if (!check_only) std::printf("%-5s %-5s %-7s %10s %9s %8s %9s\n", "type", "pages", "from", "us/token", "GB/s", "of read", "GFLOP/s");
    std::vector<float> q(kHeads * kHd), out(kHeads * kHd);
    std::mt19937 rng(3);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& x : q) x = dist(rng);
    std::vector<float> scratch(static_cast<std::size_t>(n_threads * kernels::attend_scratch_floats(kHeads / kKvHeads, depth, kHd)));
    std::vector<kernels::KvRun> runs(static_cast<std::size_t>(n_threads * ((depth + kBlock - 1) / kBlock)));
    const double flops = 4.0 * kHd * kHeads * static_cast<double>(depth) * kLayers;
    for (const KvType type : {KvType::f32, KvType::f16, KvType::q8_0}) {
        const Cache c = make_cache(type, depth);
        std::vector<Layout> layouts = {Layout::rows, Layout::heads};
        if (c.k_t && have_avx512()) layouts.push_back(Layout::keys_t);
        std::vector<float> want(out.size());  // every layout holds the same keys and values: check it
        token_seconds(c, depth, Layout::rows, false, 1, q.data(), want.data(), scratch, runs);
        for (const Layout l : layouts) {
            token_seconds(c, depth, l, false, 1, q.data(), out.data(), scratch, runs);
            float worst = 0.0f;
            for (std::size_t i = 0; i < out.size(); ++i) worst = std::max(worst, std::fabs(out[i] - want[i]));
            if (!(worst <= (l == Layout::keys_t ? 1e-4f : 0.0f))) {
                std::fprintf(stderr, "%s: outputs differ from rows' by %g\n", layout_name(l), static_cast<double>(worst));
                return 1;
            }
        }
        if (check_only) {
            std::printf("%s: the layouts agree\n", model::kv_type_name(type));
            continue;
        }
        const double bytes = 2.0 * static_cast<double>(c.layer_bytes) * kLayers;
        const double rd =
            measure_read_bandwidth(beyond_cache_bytes(static_cast<std::size_t>(bytes)), n_threads, 5).median_bytes_per_second;
        std::vector<double> secs[2][3];
        for (int r = 0; r < reps; ++r) {
            for (int one = 0; one < 2; ++one) {
                for (const Layout l : layouts) {
                    secs[one][static_cast<int>(l)].push_back(token_seconds(c, depth, l, one != 0, n_threads, q.data(), out.data(), scratch, runs));
                }
            }
        }
        for (int one = 0; one < 2; ++one) {
            for (const Layout l : layouts) {
                const double s = bench::median(secs[one][static_cast<int>(l)]);
                std::printf("%-5s %-5s %-7s %10.0f %9.1f %7.0f%% %9.1f\n", model::kv_type_name(type), layout_name(l),
                            one ? "cache" : "memory", s * 1e6, bytes / s / 1e9, one ? 0.0 : 100.0 * bytes / s / rd,
                            flops / s / 1e9);
            }
        }
        std::printf("(read pass: %.1f GB/s)\n", rd / 1e9);
    }
    return 0;
}

// One token's matvecs as the decoder runs them: per layer q/k/v (matmul_many), o, gate/up
// (matmul_many) and down, every matrix repacked into one arena as a loaded model's are,
// TinyLlama-1.1B's shapes by default, and nothing else (no norms, attention or output layer).
// Against the same bytes as one matrix, and a read pass of that size run before each
// repetition, it shows how much of decode's gap to the read is the kernels' streaming and how
// much the matrices being many and small (starts, ends, barriers).
// The arena matters: on the reference VM, matrices mapped one by one (their tails and the small
// k/v in 4 KiB pages) streamed at 5-10 GB/s on one thread against ~25 from one arena.
// Two plain loads of the one matrix's bytes, no arithmetic, put the kernels against the way they
// read: in the decode kernels' order (each thread half the groups, calls of the kernel's groups
// read side by side and prefetched as GroupStreams does), and as the read test's fastest way
// (two far-apart streams a thread).
// Variants are interleaved within each repetition; medians are reported.
//   bench_decode_sweep [type=Q4_0] [threads=2] [reps=7] [layers=22] [dim=2048] [ffn=5632] [kv=256]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_stats.hpp"
#include "bench_support/membench.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/matmul.hpp"
#include "kernels/quants.hpp"
#include "kernels/type_kernels.hpp"
#include "runtime/parallel.hpp"
#include "runtime/zeroed_memory.hpp"

using namespace ember;
using namespace ember::kernels;

namespace {

struct Matrix {
    std::vector<std::uint8_t> rows;  // the file's rows, dropped once repacked
    gguf::TensorInfo info;
    WeightMatrix w;
};

// Rows copied from a bank of quantized rows: the values do not matter for speed, and quantizing
// a gigabyte of K-quants would take longer than the benchmark.
Matrix make_matrix(TensorType t, std::int64_t n_rows, std::int64_t n_cols, const std::vector<std::uint8_t>& bank,
                   std::size_t row_bytes, ZeroedArena& arena) {
    const std::size_t bank_rows = bank.size() / row_bytes;
    Matrix m;
    m.rows.resize(row_bytes * static_cast<std::size_t>(n_rows));
    for (std::int64_t r = 0; r < n_rows; ++r) {
        const std::size_t src = static_cast<std::size_t>(r * 7919) % bank_rows;
        std::memcpy(m.rows.data() + static_cast<std::size_t>(r) * row_bytes, bank.data() + src * row_bytes, row_bytes);
    }
    m.info = gguf::TensorInfo::matrix("sweep", t, n_cols, n_rows, m.rows.data(), m.rows.size());
    m.w = WeightMatrix::prepare(m.info, Packing::always, nullptr, &arena);
    m.rows = {};
    return m;
}

std::vector<std::uint8_t> row_bank(TensorType t, std::int64_t n_cols, std::size_t row_bytes) {
    constexpr int kRows = 257;
    std::vector<float> x(static_cast<std::size_t>(n_cols));
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<std::uint8_t> bank(row_bytes * kRows);
    for (int r = 0; r < kRows; ++r) {
        for (auto& v : x) v = dist(rng);
        quantize_row(t, x.data(), bank.data() + static_cast<std::size_t>(r) * row_bytes, n_cols);
    }
    return bank;
}

struct Layer {
    Matrix q, k, v, o, gate, up, down;
};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

using ember::bench::median;

}  // namespace

int main(int argc, char** argv) {
    const std::string type_name = argc > 1 ? argv[1] : "Q4_0";
    const int threads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 2;
    const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 7;
    const int n_layers = argc > 4 ? std::max(1, std::atoi(argv[4])) : 22;
    const std::int64_t dim = argc > 5 ? std::atoll(argv[5]) : 2048, ffn = argc > 6 ? std::atoll(argv[6]) : 5632,
                       kv = argc > 7 ? std::atoll(argv[7]) : 256;
    TensorType t = TensorType::F32;
    for (TensorType c : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
        if (type_name == tensor_type_name(c)) t = c;
    }
    if (t == TensorType::F32 || dim < 256 || ffn < 256 || kv < 16 || dim % 256 != 0 || ffn % 256 != 0 || kv % 16 != 0) {
        std::fprintf(stderr, "usage: bench_decode_sweep [Q4_0|Q8_0|Q4_K|Q5_K|Q6_K] [threads] [reps] [layers] "
                             "[dim, a multiple of 256] [ffn, a multiple of 256] [kv, a multiple of 16]\n");
        return 2;
    }
    const auto tr = tensor_type_traits(static_cast<std::uint32_t>(t));
    const std::size_t rb_dim = static_cast<std::size_t>(dim / tr->block_size * tr->block_bytes);
    const std::size_t rb_ffn = static_cast<std::size_t>(ffn / tr->block_size * tr->block_bytes);
    const auto bank_dim = row_bank(t, dim, rb_dim), bank_ffn = row_bank(t, ffn, rb_ffn);

    // Repacked copies take the file's bytes give or take a padded block a group: room to spare.
    const std::size_t layer_bytes = rb_dim * static_cast<std::size_t>(2 * dim + 2 * kv + 2 * ffn) +
                                    rb_ffn * static_cast<std::size_t>(dim);
    const std::size_t total_rows_bytes = layer_bytes * static_cast<std::size_t>(n_layers);
    ZeroedArena layer_arena(total_rows_bytes + total_rows_bytes / 16 + (std::size_t{16} << 20));
    std::vector<Layer> layers(static_cast<std::size_t>(n_layers));
    std::size_t total = 0;
    for (Layer& l : layers) {
        l.q = make_matrix(t, dim, dim, bank_dim, rb_dim, layer_arena);
        l.k = make_matrix(t, kv, dim, bank_dim, rb_dim, layer_arena);
        l.v = make_matrix(t, kv, dim, bank_dim, rb_dim, layer_arena);
        l.o = make_matrix(t, dim, dim, bank_dim, rb_dim, layer_arena);
        l.gate = make_matrix(t, ffn, dim, bank_dim, rb_dim, layer_arena);
        l.up = make_matrix(t, ffn, dim, bank_dim, rb_dim, layer_arena);
        l.down = make_matrix(t, dim, ffn, bank_ffn, rb_ffn, layer_arena);
        for (const Matrix* m : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down}) total += m->w.bytes();
    }
    layer_arena.finish();
    const auto big_rows = static_cast<std::int64_t>(total / rb_dim) / 16 * 16;
    ZeroedArena big_arena(rb_dim * static_cast<std::size_t>(big_rows) * 17 / 16 + (std::size_t{16} << 20));
    const Matrix big = make_matrix(t, big_rows, dim, bank_dim, rb_dim, big_arena);
    big_arena.finish();

    std::vector<float> x(static_cast<std::size_t>(ffn)), yq(static_cast<std::size_t>(dim)),
        yk(static_cast<std::size_t>(kv)), yv(static_cast<std::size_t>(kv)), yo(static_cast<std::size_t>(dim)),
        yg(static_cast<std::size_t>(ffn)), yu(static_cast<std::size_t>(ffn)), yd(static_cast<std::size_t>(dim)),
        ybig(static_cast<std::size_t>(big_rows));
    std::mt19937 rng(2);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (auto& v : x) v = uniform(rng);
    std::size_t scratch_bytes = matmul_scratch_bytes(big.w, 1);
    for (const Layer& l : layers) scratch_bytes = std::max(scratch_bytes, matmul_scratch_bytes(l.down.w, 1));
    std::vector<std::byte> scratch(scratch_bytes);

    // Seconds of each kind of call (q/k/v, o, gate/up, down) in the sweep being timed.
    double kind_seconds[4] = {0, 0, 0, 0};
    const auto sweep = [&] {
        const double t0 = now();
        double t_prev = t0;
        const auto lap = [&](int kind) {
            const double t_now = now();
            kind_seconds[kind] += t_now - t_prev;
            t_prev = t_now;
        };
        for (const Layer& l : layers) {
            const MatmulJob qkv[] = {{&l.q.w, yq.data(), dim}, {&l.k.w, yk.data(), kv}, {&l.v.w, yv.data(), kv}};
            matmul_many(qkv, x.data(), 1, scratch, threads);
            lap(0);
            matmul(l.o.w, x.data(), 1, yo.data(), dim, scratch, threads);
            lap(1);
            const MatmulJob gate_up[] = {{&l.gate.w, yg.data(), ffn}, {&l.up.w, yu.data(), ffn}};
            matmul_many(gate_up, x.data(), 1, scratch, threads);
            lap(2);
            matmul(l.down.w, x.data(), 1, yd.data(), dim, scratch, threads);
            lap(3);
        }
        return t_prev - t0;
    };
    const auto one = [&] {
        const double t0 = now();
        matmul(big.w, x.data(), 1, ybig.data(), big_rows, scratch, threads);
        return now() - t0;
    };
    // The one matrix's bytes loaded plainly, each thread a contiguous half (of whole groups).
    const TypeKernels* tk = type_kernels(t, active_isa());
    const int g_call = tk != nullptr ? tk->decode_groups : 2;
    const std::size_t group_bytes = big.w.group_bytes();
    const std::int64_t n_big_groups = group_bytes > 0 ? static_cast<std::int64_t>(big.w.bytes() / group_bytes) : 0;
    // Each stream's lead as the x86 kernels' (isa/x86_common-inl.hpp: kCallAhead / G, at most
    // kPrefetchAhead).
    const std::size_t ahead = std::min<std::size_t>(4096, 8192 / static_cast<std::size_t>(g_call));
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads), 0);
    const auto plain = [&](bool as_decode) {
        const double t0 = now();
        parallel_for(threads, threads, 1, [&](std::int64_t w0, std::int64_t w1, int worker) {
            for (std::int64_t w = w0; w < w1; ++w) {
                const std::int64_t g0 = n_big_groups * w / threads, g1 = n_big_groups * (w + 1) / threads;
                const std::uint8_t* p = big.w.data() + static_cast<std::size_t>(g0) * group_bytes;
                sums[static_cast<std::size_t>(worker)] +=
                    as_decode ? read_as_decode(p, group_bytes, g1 - g0, g_call, ahead)
                              : read_two_streams(p, static_cast<std::size_t>(g1 - g0) * group_bytes);
            }
        });
        return now() - t0;
    };
    sweep();  // warm
    one();
    std::fill(std::begin(kind_seconds), std::end(kind_seconds), 0.0);
    std::vector<double> t_sweep, t_one, t_pattern, t_two, read, of_read_sweep, of_read_one, t_kind[4];
    for (int r = 0; r < reps; ++r) {
        read.push_back(measure_read_bandwidth(total, threads, 1).bytes_per_second);
        // Not timed: the first pass after the read pass ran 10-15% slower than the ones after it
        // (Q4_0, 2 threads: 40-43 GB/s, then 45-51), and it used to be the sweep's, every time.
        sweep();
        std::fill(std::begin(kind_seconds), std::end(kind_seconds), 0.0);
        t_sweep.push_back(sweep());
        for (int k = 0; k < 4; ++k) t_kind[k].push_back(kind_seconds[k]);
        t_one.push_back(one());
        if (group_bytes > 0) {
            t_pattern.push_back(plain(true));
            t_two.push_back(plain(false));
        }
        of_read_sweep.push_back(static_cast<double>(total) / t_sweep.back() / read.back());
        of_read_one.push_back(static_cast<double>(big.w.bytes()) / t_one.back() / read.back());
    }
    const double gb = 1e-9;
    std::printf("%s %s threads=%d reps=%d: %d layers (dim %lld, ffn %lld, kv %lld), %.1f MB a token; read %.1f GB/s\n",
                type_name.c_str(), isa_name(active_isa()).data(), threads, reps, n_layers, static_cast<long long>(dim),
                static_cast<long long>(ffn), static_cast<long long>(kv), static_cast<double>(total) * 1e-6,
                median(read) * gb);
    std::printf("  layer sweep: %7.3f ms  %6.1f GB/s  %3.0f%% of read\n", median(t_sweep) * 1e3,
                static_cast<double>(total) / median(t_sweep) * gb, 100.0 * median(of_read_sweep));
    std::printf("  one matrix:  %7.3f ms  %6.1f GB/s  %3.0f%% of read\n", median(t_one) * 1e3,
                static_cast<double>(big.w.bytes()) / median(t_one) * gb, 100.0 * median(of_read_one));
    if (!t_pattern.empty()) {
        const double bytes = static_cast<double>(static_cast<std::size_t>(n_big_groups) * group_bytes);
        std::printf("  its bytes loaded plainly: as the decode kernels read (calls of %d groups, %zu B ahead) "
                    "%.1f GB/s, in two streams a thread %.1f GB/s\n",
                    g_call, ahead, bytes / median(t_pattern) * gb, bytes / median(t_two) * gb);
    }
    const Layer& l0 = layers[0];
    const std::size_t kind_bytes[4] = {l0.q.w.bytes() + l0.k.w.bytes() + l0.v.w.bytes(), l0.o.w.bytes(),
                                       l0.gate.w.bytes() + l0.up.w.bytes(), l0.down.w.bytes()};
    const char* kind_names[4] = {"q/k/v", "o", "gate/up", "down"};
    // Medians over the repetitions: one slow call must not pass for its kind being slow (the
    // last layer's down projection once streamed at a tenth of the rate, from a huge page that
    // ZeroedArena::finish had split; a mean showed it as "down" being slow).
    std::printf("  in the sweep (medians):");
    for (int k = 0; k < 4; ++k) {
        std::printf(" %s %.1f GB/s%s", kind_names[k],
                    static_cast<double>(kind_bytes[k]) * n_layers / median(t_kind[k]) * gb, k < 3 ? "," : "\n");
    }
    std::uint64_t all = 0;
    for (std::uint64_t v : sums) all += v;
    volatile std::uint64_t keep = all;  // the plain loads must happen
    (void)keep;
    return 0;
}

// Kernel micro-benchmarks: matvec bandwidth (GB/s of weights streamed, matrix larger than L3, and
// that as a fraction of a read pass of the same size run just before it: how close the kernel
// streams to what the threads can read), matvec speed on a matrix that stays in L2 (the kernel's own rate: decode is kernel-bound on a
// machine whose memory is faster than it) and prefill matmul throughput (GOP/s, 2 ops per
// multiply-add) per weight type and ISA.
// "serial GB/s" is what the matvec would stream if a core read the weights and computed on them
// one after the other, 1 / (1 / read + 1 / in-L2), and "of serial" the matvec against it: ~100%
// where a core's reads stall while it computes, up to in-L2 / read + 1 where they overlap fully
// (docs/performance.md, "Where the last third of decode goes").
// ISAs are interleaved within each repetition; medians are reported.
//   bench_kernels [threads=2] [reps=9] [types=all|Q4_0,Q8_0,...]
#include <algorithm>
#include <chrono>
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

using namespace ember;
using namespace ember::kernels;

namespace {

struct Matrix {
    std::vector<std::uint8_t> bytes;
    gguf::TensorInfo info;
    WeightMatrix w;
};

Matrix make_matrix(TensorType t, std::int64_t n_rows, std::int64_t n_cols, const std::vector<float>& pool) {
    const auto tr = tensor_type_traits(static_cast<std::uint32_t>(t));
    const std::size_t row_bytes = static_cast<std::size_t>(n_cols / tr->block_size * tr->block_bytes);
    Matrix m;
    m.bytes.resize(row_bytes * static_cast<std::size_t>(n_rows));
    for (std::int64_t r = 0; r < n_rows; ++r) {
        const std::size_t off = static_cast<std::size_t>(r * 7919) % (pool.size() - static_cast<std::size_t>(n_cols));
        quantize_row(t, pool.data() + off, m.bytes.data() + static_cast<std::size_t>(r) * row_bytes, n_cols);
    }
    m.info = gguf::TensorInfo::matrix("bench", t, n_cols, n_rows, m.bytes.data(), m.bytes.size());
    m.w = WeightMatrix::prepare(m.info);
    return m;
}

double seconds_of(const WeightMatrix& w, const std::vector<float>& x, std::int64_t n_tokens,
                  std::vector<float>& y, std::vector<std::byte>& scratch, int threads, Isa isa) {
    const auto t0 = std::chrono::steady_clock::now();
    matmul(w, x.data(), n_tokens, y.data(), w.n_rows(), scratch, threads, isa);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

using ember::bench::median;

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 9;
    const std::string type_filter = argc > 3 ? argv[3] : "all";
    const std::int64_t n_cols = 4096;
    const std::size_t decode_bytes = beyond_cache_bytes(std::size_t{96} << 20);
    const std::int64_t prefill_rows = 1024, prefill_tokens = 128;

    std::vector<float> pool(1 << 22);
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto& v : pool) v = dist(rng);
    std::vector<Isa> isas;
    for (int i = 0; i < kIsaCount; ++i)
        if (isa_available(static_cast<Isa>(i))) isas.push_back(static_cast<Isa>(i));

    std::printf("threads=%d reps=%d detected=%s; matvec %lld cols, >= %zu MiB of weights; prefill %lldx%lld x %lld tokens\n",
                threads, reps, isa_name(detected_isa()).data(), static_cast<long long>(n_cols), decode_bytes >> 20,
                static_cast<long long>(prefill_rows), static_cast<long long>(n_cols), static_cast<long long>(prefill_tokens));
    std::printf("%-6s %-7s %12s %8s %12s %14s %12s %9s %12s\n", "type", "isa", "matvec GB/s", "of read", "matvec ms",
                "in-L2 GB/s", "serial GB/s", "of serial", "prefill GOP/s");
    const TensorType types[] = {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                                TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K,
                                TensorType::F16,  TensorType::BF16, TensorType::F32};
    for (TensorType t : types) {
        const std::string name(tensor_type_name(t));
        if (type_filter != "all" && type_filter.find(name) == std::string::npos) continue;
        const auto tr = tensor_type_traits(static_cast<std::uint32_t>(t));
        const std::size_t row_bytes = static_cast<std::size_t>(n_cols / tr->block_size * tr->block_bytes);
        const auto decode_rows = static_cast<std::int64_t>((decode_bytes + row_bytes - 1) / row_bytes);
        Matrix big = make_matrix(t, decode_rows, n_cols, pool);
        Matrix small = make_matrix(t, prefill_rows, n_cols, pool);
        // Rows of the in-cache matvec: about 512 KiB of weights per thread.
        const auto cached_rows = std::max<std::int64_t>(
            16, static_cast<std::int64_t>((std::size_t{512} << 10) * static_cast<std::size_t>(threads) / row_bytes) / 16 * 16);
        Matrix cached = make_matrix(t, cached_rows, n_cols, pool);
        std::vector<float> x1(pool.begin(), pool.begin() + n_cols);
        std::vector<float> xp(pool.begin() + 5, pool.begin() + 5 + n_cols * prefill_tokens);
        std::vector<float> y1(static_cast<std::size_t>(decode_rows)), yp(static_cast<std::size_t>(prefill_rows * prefill_tokens));
        std::vector<float> yc(static_cast<std::size_t>(cached_rows));
        std::vector<std::byte> s1(matmul_scratch_bytes(big.w, 1)), sp(matmul_scratch_bytes(small.w, prefill_tokens));
        std::vector<std::vector<double>> tdec(isas.size()), tpre(isas.size()), tcache(isas.size()), of_read(isas.size()),
            serial(isas.size()), of_serial(isas.size());
        for (std::size_t i = 0; i < isas.size(); ++i) seconds_of(big.w, x1, 1, y1, s1, threads, isas[i]);  // warm
        for (int r = 0; r < reps; ++r) {
            const double read = measure_read_bandwidth(big.w.bytes(), threads, 1).bytes_per_second;
            for (std::size_t i = 0; i < isas.size(); ++i) {
                tdec[i].push_back(seconds_of(big.w, x1, 1, y1, s1, threads, isas[i]));
                of_read[i].push_back(static_cast<double>(big.w.bytes()) / tdec[i].back() / read);
                seconds_of(cached.w, x1, 1, yc, s1, threads, isas[i]);  // into the caches
                double best = 1e30;  // a few calls: the fastest is the one not disturbed
                for (int k = 0; k < 20; ++k) best = std::min(best, seconds_of(cached.w, x1, 1, yc, s1, threads, isas[i]));
                tcache[i].push_back(best);
                // Reading, then computing: their seconds per byte add up.
                serial[i].push_back(1.0 / (1.0 / read + best / static_cast<double>(cached.w.bytes())));
                of_serial[i].push_back(static_cast<double>(big.w.bytes()) / tdec[i].back() / serial[i].back());
                // Scalar prefill is slow: fewer repetitions.
                if (isas[i] != Isa::scalar || r < 3) tpre[i].push_back(seconds_of(small.w, xp, prefill_tokens, yp, sp, threads, isas[i]));
            }
        }
        for (std::size_t i = 0; i < isas.size(); ++i) {
            const double td = median(tdec[i]), tp = median(tpre[i]);
            const double gops = 2.0 * static_cast<double>(prefill_rows * n_cols * prefill_tokens) / tp * 1e-9;
            std::printf("%-6s %-7s %12.2f %7.0f%% %12.3f %14.2f %12.2f %8.0f%% %12.1f\n", name.c_str(),
                        isa_name(isas[i]).data(), static_cast<double>(big.w.bytes()) / td * 1e-9,
                        100.0 * median(of_read[i]), td * 1e3, static_cast<double>(cached.w.bytes()) / median(tcache[i]) * 1e-9,
                        median(serial[i]) * 1e-9, 100.0 * median(of_serial[i]), gops);
        }
        std::fflush(stdout);
    }
    return 0;
}

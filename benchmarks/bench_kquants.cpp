// K-quant matrix-vector throughput (decode): GB/s of weights streamed per type, ISA and thread
// count, through the real matmul path (activation quantization included).
//   hot:  one rows x cols matrix, repeated (may sit in the last-level cache)
//   cold: a rotation of copies totalling >= 512 MiB and 4x the last-level cache, so every pass
//         comes from DRAM; "of read": cold as a fraction of a read pass (>= 256 MiB, 4x the
//         last-level cache) on as many threads just before it
//   cpu:  1 thread, timed by thread CPU time (robust on a loaded machine: preemption excluded)
//   kernel: the bare vec_dot over an L2-resident block of rows (compute ceiling), CPU time
//   pp64: prefill of 64 tokens, 1 thread, CPU time, in GOP/s (2 ops per weight per token)
// Usage: bench_kquants [rows=4096] [cols=4096] [reps=20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "bench_support/membench.hpp"
#include "gguf/gguf_file.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/kquant.hpp"
#include "kernels/matmul.hpp"

using namespace ember;
using namespace ember::kernels;

namespace {

std::vector<float> random_row(std::int64_t n, std::uint32_t seed) {
    std::vector<float> x(static_cast<std::size_t>(n));
    std::uint32_t s = seed * 2654435761u + 1;
    for (auto& v : x) {
        s = s * 1664525u + 1013904223u;
        v = (static_cast<float>(s >> 8) / 16777216.0f - 0.5f) * 0.1f;
    }
    return x;
}

std::vector<std::uint8_t> quantize_row(TensorType t, const std::vector<float>& x) {
    const auto n = static_cast<std::int64_t>(x.size());
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(t));
    std::vector<std::uint8_t> out(static_cast<std::size_t>(n / 256 * traits->block_bytes));
    if (t == TensorType::Q4_K) quantize_row_q4_k(x.data(), reinterpret_cast<BlockQ4K*>(out.data()), n);
    if (t == TensorType::Q5_K) quantize_row_q5_k(x.data(), reinterpret_cast<BlockQ5K*>(out.data()), n);
    if (t == TensorType::Q6_K) quantize_row_q6_k(x.data(), reinterpret_cast<BlockQ6K*>(out.data()), n);
    return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
    const std::int64_t rows = argc > 1 ? std::atoll(argv[1]) : 4096;
    const std::int64_t cols = argc > 2 ? std::atoll(argv[2]) : 4096;
    const int reps = argc > 3 ? std::atoi(argv[3]) : 20;
    if (rows <= 0 || cols <= 0 || cols % 256 != 0 || reps <= 0) {
        std::fprintf(stderr, "usage: bench_kquants [rows] [cols, multiple of 256] [reps]\n");
        return 1;
    }
    std::printf("bench_kquants: %lld x %lld, detected ISA %s\n", static_cast<long long>(rows),
                static_cast<long long>(cols), std::string(isa_name(detected_isa())).c_str());
    std::printf("%-5s %-7s %7s %9s %9s %8s %9s %11s %10s %10s\n", "type", "isa", "threads", "hot GB/s",
                "cold GB/s", "of read", "cpu GB/s", "kernel GB/s", "us/matvec", "pp64 GOP/s");

    const auto x = random_row(cols, 99);
    const std::int64_t n_prefill = 64;
    const auto xp = random_row(cols * n_prefill, 98);
    std::vector<float> yp(static_cast<std::size_t>(rows * n_prefill));
    std::vector<float> y(static_cast<std::size_t>(rows));
    for (TensorType t : {TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
        // 64 distinct quantized rows, tiled over the matrix (content does not change speed).
        std::vector<std::vector<std::uint8_t>> distinct;
        for (int r = 0; r < 64; ++r) distinct.push_back(quantize_row(t, random_row(cols, static_cast<std::uint32_t>(r))));
        const std::size_t row_bytes = distinct[0].size();
        const std::size_t mat_bytes = row_bytes * static_cast<std::size_t>(rows);
        const std::size_t cold_bytes = beyond_cache_bytes(std::size_t{512} << 20);
        const std::size_t n_copies = std::max<std::size_t>(1, (cold_bytes + mat_bytes - 1) / mat_bytes);
        std::vector<std::uint8_t> pool(mat_bytes * n_copies);
        for (std::size_t r = 0; r < static_cast<std::size_t>(rows) * n_copies; ++r) {
            std::memcpy(pool.data() + r * row_bytes, distinct[r % 64].data(), row_bytes);
        }
        std::vector<WeightMatrix> mats;
        for (std::size_t c = 0; c < n_copies; ++c) {
            mats.push_back(WeightMatrix::prepare(
                gguf::TensorInfo::matrix("bench", t, cols, rows, pool.data() + c * mat_bytes, mat_bytes)));
        }
        std::vector<std::byte> scratch(matmul_scratch_bytes(mats[0], n_prefill));

        for (int isa_id = 0; isa_id < kIsaCount; ++isa_id) {
            const Isa isa = static_cast<Isa>(isa_id);
            if (!isa_available(isa)) continue;
            for (int threads : {1, 2}) {
                const int hot_reps = isa == Isa::scalar ? std::max(1, reps / 10) : reps;
                matmul(mats[0], x.data(), 1, y.data(), rows, scratch, threads, isa);  // warm up
                auto t0 = std::chrono::steady_clock::now();
                for (int r = 0; r < hot_reps; ++r) matmul(mats[0], x.data(), 1, y.data(), rows, scratch, threads, isa);
                const double hot = seconds_since(t0) / hot_reps;
                const std::size_t cold_reps = isa == Isa::scalar ? n_copies : 2 * n_copies;
                const double read = measure_read_bandwidth(beyond_cache_bytes(std::size_t{256} << 20), threads, 1).bytes_per_second;
                t0 = std::chrono::steady_clock::now();
                for (std::size_t r = 0; r < cold_reps; ++r) {
                    matmul(mats[r % n_copies], x.data(), 1, y.data(), rows, scratch, threads, isa);
                }
                const double cold = seconds_since(t0) / static_cast<double>(cold_reps);
                double cpu_gbs = 0, kernel_gbs = 0, pp_gops = 0;
                if (threads == 1) {
                    double c0 = thread_cpu_seconds();
                    for (std::size_t r = 0; r < cold_reps; ++r) {
                        matmul(mats[r % n_copies], x.data(), 1, y.data(), rows, scratch, 1, isa);
                    }
                    cpu_gbs = mat_bytes * static_cast<double>(cold_reps) / (thread_cpu_seconds() - c0) * 1e-9;
                    // Bare kernel: 64 rows (< 64 KiB of Q4_K at 4096 columns) against one activation row.
                    const TypeKernels* k = type_kernels(t, isa);
                    const std::uint8_t* act = reinterpret_cast<const std::uint8_t*>(scratch.data());
                    act += (64 - reinterpret_cast<std::uintptr_t>(act) % 64) % 64;  // matmul's aligned act
                    const int kreps = isa == Isa::scalar ? 20 : 400;
                    float sink = 0;
                    c0 = thread_cpu_seconds();
                    for (int r = 0; r < kreps; ++r) {
                        for (int row = 0; row < 64; ++row) sink += k->vec_dot(cols, pool.data() + row * row_bytes, act);
                    }
                    kernel_gbs = 64.0 * row_bytes * kreps / (thread_cpu_seconds() - c0) * 1e-9;
                    if (sink == 12345.678f) std::printf(" ");
                    c0 = thread_cpu_seconds();
                    matmul(mats[0], xp.data(), n_prefill, yp.data(), rows, scratch, 1, isa);
                    pp_gops = 2.0 * rows * cols * n_prefill / (thread_cpu_seconds() - c0) * 1e-9;
                }
                std::printf("%-5s %-7s %7d %9.1f %9.1f %7.0f%% %9.1f %11.1f %10.1f %10.1f\n",
                            std::string(tensor_type_name(t)).c_str(), std::string(isa_name(isa)).c_str(),
                            threads, mat_bytes / hot * 1e-9, mat_bytes / cold * 1e-9, 100.0 * mat_bytes / cold / read,
                            cpu_gbs, kernel_gbs,
                            hot * 1e6, pp_gops);
            }
        }
    }
    return 0;
}

// Runs REPS matmuls of one random ROWS x 2048 weight matrix of TYPE, packed or row-major, on one
// ISA and one thread: a fixed workload for counting the instructions a kernel executes under an
// emulator (scripts/qemu-insn-count.sh subtracts a run of 1 from a run of 3), where wall time
// says little. On hardware it also prints the mean wall time of a matmul and the weight bytes
// it streams per second (ROWS large: from memory; small: from cache).
// Usage: bench_matmul_reps TYPE(q4_0|q8_0|q4_k|q5_k|q6_k) PACKED(0|1) TOKENS REPS ROWS [ISA]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/matmul.hpp"

using namespace ember;
using namespace ember::kernels;

int main(int argc, char** argv) {
    if (argc < 6) {
        std::fprintf(stderr, "usage: bench_matmul_reps TYPE PACKED TOKENS REPS ROWS [ISA]\n");
        return 2;
    }
    const std::string name = argv[1];
    const TensorType type = name == "q4_0" ? TensorType::Q4_0 : name == "q8_0" ? TensorType::Q8_0
                          : name == "q4_k" ? TensorType::Q4_K : name == "q5_k" ? TensorType::Q5_K
                          : name == "q6_k" ? TensorType::Q6_K : TensorType::F32;
    const bool packed = std::atoi(argv[2]) != 0;
    const std::int64_t n_tok = std::atoll(argv[3]), rows = std::atoll(argv[5]), cols = 2048;
    const int reps = std::atoi(argv[4]);
    Isa isa = active_isa();
    if (argc > 6 && (!isa_from_name(argv[6], isa) || !isa_available(isa))) {
        std::fprintf(stderr, "bench_matmul_reps: ISA %s is unknown or not available here\n", argv[6]);
        return 2;
    }
    if (type == TensorType::F32 || n_tok < 1 || rows < 1 || reps < 0) {
        std::fprintf(stderr, "bench_matmul_reps: bad arguments\n");
        return 2;
    }
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(type));
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(cols / traits->block_size) * traits->block_bytes *
                                    static_cast<std::size_t>(rows));
    std::mt19937 rng(1);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    for (std::size_t i = 1; i < bytes.size(); i += 2) bytes[i] &= 0x3b;  // fp16 fields stay finite
    const auto info = gguf::TensorInfo::matrix("w", type, cols, rows, bytes.data(), bytes.size());
    const WeightMatrix w = WeightMatrix::prepare(info, packed ? Packing::always : Packing::never);
    std::vector<float> x(static_cast<std::size_t>(cols * n_tok)), y(static_cast<std::size_t>(rows * n_tok));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (auto& v : x) v = uniform(rng);
    std::vector<std::byte> scratch(matmul_scratch_bytes(w, n_tok));
    // One clock read before and after the loop: the same 2 calls at every REPS, so they cancel
    // in the emulator's difference of two runs (a read per repetition would not).
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) matmul(w, x.data(), n_tok, y.data(), rows, scratch, 1, isa);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
                      std::max(reps, 1);
    std::printf("%s %s packed=%d tokens=%lld: y[0] = %g, %.1f us a matmul (mean), %.2f GB/s of weights\n", name.c_str(),
                std::string(isa_name(isa)).c_str(), packed ? 1 : 0, static_cast<long long>(n_tok),
                static_cast<double>(y[0]), us, us > 0 ? static_cast<double>(bytes.size()) / us * 1e-3 : 0.0);
    return 0;
}

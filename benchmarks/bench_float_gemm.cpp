// Float-weight prefill GEMM (F32 / F16 / BF16 weights): ember's register tiles (matmul) against
// Eigen's blocked GEMM on the same data in the same run, interleaved, medians reported. Eigen
// gets the weights converted to f32 per row block (converted once per block, reused by every
// token) and runs single-threaded on each worker's rows, as ember's tiles do.
// Also checks batch invariance: each variant's output rows for tokens computed in a batch of
// n_tokens are compared bitwise with the same tokens computed in small batches (1, 7, 33).
//   bench_float_gemm [threads=2] [reps=5] [tokens=512] [types=F32,F16,BF16]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "bench_stats.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/matmul.hpp"
#include "kernels/quants.hpp"
#include "runtime/parallel.hpp"

using namespace ember;
using namespace ember::kernels;

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Weights {
    std::vector<std::uint8_t> bytes;
    gguf::TensorInfo info;
    WeightMatrix w;
};

Weights make_weights(TensorType t, std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 0.05f);
    std::vector<float> f(static_cast<std::size_t>(rows * cols));
    for (auto& v : f) v = dist(rng);
    const auto tr = tensor_type_traits(static_cast<std::uint32_t>(t));
    const auto row_bytes = static_cast<std::size_t>(cols / tr->block_size * tr->block_bytes);
    Weights w;
    w.bytes.resize(row_bytes * static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) {
        quantize_row(t, f.data() + r * cols, w.bytes.data() + static_cast<std::size_t>(r) * row_bytes, cols);
    }
    w.info = gguf::TensorInfo::matrix("bench", t, cols, rows, w.bytes.data(), w.bytes.size());
    w.w = WeightMatrix::prepare(w.info);
    return w;
}

// Eigen variant: y[t * ldy + r] = sum_c W[r][c] x[t][c], rows split over threads like matmul,
// each worker converting 128-row blocks of W to f32 and calling Eigen's GEMM on them. The
// activations get the same rounding as ember's (BF16 weights: activations rounded to bf16).
void eigen_matmul(const Weights& w, const float* x, std::int64_t n_tokens, float* y, std::int64_t ldy, int threads) {
    const std::int64_t n = w.w.n_cols();
    const TypeKernels& k = *type_kernels(w.w.type(), Isa::scalar);
    std::vector<float> xr(static_cast<std::size_t>(n_tokens * n));
    if (k.act_type == TensorType::BF16) {
        std::vector<std::uint16_t> h(static_cast<std::size_t>(n));
        for (std::int64_t t = 0; t < n_tokens; ++t) {
            quantize_act_bf16(x + t * n, h.data(), n);
            dequantize_bf16(h.data(), xr.data() + t * n, n);
        }
    } else {
        std::copy(x, x + n_tokens * n, xr.begin());
    }
    const Eigen::Map<const RowMatrix> X(xr.data(), n_tokens, n);
    constexpr std::int64_t kBlock = 128;
    parallel_for(w.w.n_rows(), threads, kBlock, [&](std::int64_t r0, std::int64_t r1, int) {
        RowMatrix wf(kBlock, n);
        for (std::int64_t rb = r0; rb < r1; rb += kBlock) {
            const std::int64_t nr = std::min(kBlock, r1 - rb);
            for (std::int64_t r = 0; r < nr; ++r) {
                k.dequantize(w.w.data() + static_cast<std::size_t>(rb + r) * w.w.row_bytes(), wf.data() + r * n, n);
            }
            Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>> Y(y + rb, n_tokens, nr, Eigen::OuterStride<>(ldy));
            Y.noalias() = X * wf.topRows(nr).transpose();
        }
    });
}

void ember_matmul(const Weights& w, const float* x, std::int64_t n_tokens, float* y, std::int64_t ldy, int threads) {
    static std::vector<std::byte> scratch;
    scratch.resize(std::max(scratch.size(), matmul_scratch_bytes(w.w, n_tokens)));
    matmul(w.w, x, n_tokens, y, ldy, scratch, threads);
}

using Variant = void (*)(const Weights&, const float*, std::int64_t, float*, std::int64_t, int);

// Whether the variant's rows for tokens [first, first + count) of a full batch equal the rows it
// gives when run on those tokens alone, for a few sub-batches.
bool invariant(Variant v, const Weights& w, const std::vector<float>& x, std::int64_t n_tokens, int threads) {
    const std::int64_t rows = w.w.n_rows(), n = w.w.n_cols();
    std::vector<float> full(static_cast<std::size_t>(n_tokens * rows));
    v(w, x.data(), n_tokens, full.data(), rows, threads);
    const std::int64_t cuts[][2] = {{0, 1}, {5, 7}, {100, 33}, {n_tokens - 1, 1}};
    for (const auto& c : cuts) {
        if (c[0] + c[1] > n_tokens) continue;
        std::vector<float> part(static_cast<std::size_t>(c[1] * rows));
        v(w, x.data() + c[0] * n, c[1], part.data(), rows, threads);
        if (std::memcmp(part.data(), full.data() + c[0] * rows, part.size() * sizeof(float)) != 0) return false;
    }
    return true;
}

double seconds(Variant v, const Weights& w, const std::vector<float>& x, std::int64_t n_tokens, std::vector<float>& y, int threads) {
    const auto t0 = std::chrono::steady_clock::now();
    v(w, x.data(), n_tokens, y.data(), w.w.n_rows(), threads);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

using ember::bench::median;

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    const std::int64_t n_tokens = argc > 3 ? std::max(1, std::atoi(argv[3])) : 512;
    const std::string filter = argc > 4 ? argv[4] : "F32,F16,BF16";
    std::printf("threads=%d reps=%d tokens=%lld isa=%s; GFLOP/s (2 per multiply-add), median; "
                "invariant: sub-batches bitwise equal to the full batch\n",
                threads, reps, static_cast<long long>(n_tokens), isa_name(active_isa()).data());
    std::printf("%-5s %-11s %10s %10s %10s %10s %12s %12s\n", "type", "shape", "ember", "eigen", "ember ms",
                "eigen ms", "ember inv.", "eigen inv.");
    const std::int64_t shapes[][2] = {{2048, 2048}, {2048, 5632}, {5632, 2048}};  // TinyLlama: attn, ffn down, ffn up
    const struct { const char* name; TensorType type; } types[] = {
        {"F32", TensorType::F32}, {"F16", TensorType::F16}, {"BF16", TensorType::BF16}};
    std::vector<float> x(static_cast<std::size_t>(n_tokens * 5632));
    std::mt19937 rng(7);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (auto& v : x) v = dist(rng);
    for (const auto& t : types) {
        if (filter.find(t.name) == std::string::npos) continue;
        for (const auto& s : shapes) {
            const Weights w = make_weights(t.type, s[0], s[1], 3);
            std::vector<float> y(static_cast<std::size_t>(n_tokens * s[0]));
            const Variant variants[2] = {ember_matmul, eigen_matmul};
            std::vector<double> time[2];
            for (Variant v : variants) seconds(v, w, x, n_tokens, y, threads);  // warm
            for (int r = 0; r < reps; ++r) {
                for (int i = 0; i < 2; ++i) time[i].push_back(seconds(variants[i], w, x, n_tokens, y, threads));
            }
            const double flop = 2.0 * static_cast<double>(s[0] * s[1] * n_tokens);
            const double te = median(time[0]), tg = median(time[1]);
            char shape[32];
            std::snprintf(shape, sizeof shape, "%lldx%lld", static_cast<long long>(s[0]), static_cast<long long>(s[1]));
            std::printf("%-5s %-11s %10.1f %10.1f %10.2f %10.2f %12s %12s\n", t.name, shape, flop / te * 1e-9,
                        flop / tg * 1e-9, te * 1e3, tg * 1e3,
                        invariant(ember_matmul, w, x, n_tokens, threads) ? "yes" : "NO",
                        invariant(eigen_matmul, w, x, n_tokens, threads) ? "yes" : "NO");
            std::fflush(stdout);
        }
    }
    return 0;
}

// Batch invariance of matmul: an activation row's outputs are bitwise the same whether it is
// multiplied alone (decode), at any place in a batch of other rows (batched decode, prefill
// chunks, the packed 8-token tiles and their remainders), and at any thread count. The engine's
// promise that a sequence's logits do not depend on which sequences share its forward pass
// rests on this.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/matmul.hpp"
#include "kernels/quants.hpp"

using namespace ember;
using namespace ember::kernels;
using kernel_test::available_isas;
using kernel_test::random_floats;

namespace {

const TensorType kEveryType[] = {TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q8_0,
                             TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1,
                             TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};

struct TypedWeights {
    std::vector<std::uint8_t> bytes;
    gguf::TensorInfo info;
};

TypedWeights make_weights(TensorType t, std::int64_t n_rows, std::int64_t n) {
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(t));
    const auto stride = static_cast<std::size_t>(n / traits->block_size * traits->block_bytes);
    TypedWeights w;
    w.bytes.assign(stride * static_cast<std::size_t>(n_rows), 0);
    const auto f = random_floats(static_cast<std::size_t>(n_rows * n), 5);
    for (std::int64_t r = 0; r < n_rows; ++r) {
        quantize_row(t, f.data() + r * n, w.bytes.data() + static_cast<std::size_t>(r) * stride, n);
    }
    w.info = gguf::TensorInfo::matrix("invariance.weight", t, n, n_rows, w.bytes.data(), w.bytes.size());
    return w;
}

std::vector<float> run(const WeightMatrix& w, const float* x, std::int64_t n_tokens, int threads, Isa isa) {
    std::vector<std::byte> scratch(matmul_scratch_bytes(w, n_tokens));
    std::vector<float> y(static_cast<std::size_t>(n_tokens * w.n_rows()));
    matmul(w, x, n_tokens, y.data(), w.n_rows(), scratch, threads, isa);
    return y;
}

}  // namespace

TEST_CASE("matmul: each row's result is bitwise independent of the batch and the thread count",
          "[matmul][batch-invariance]") {
    // 37 rows: two full packed groups and a partial one; 20 tokens: two 8-token tiles and a
    // remainder, and the sub-batches below cut them at other remainders (every remainder of the
    // 4- and 6-token float tiles).
    const std::int64_t n_rows = 37, n_tokens = 20;
    for (TensorType t : kEveryType) {
        const bool kq = t == TensorType::Q4_K || t == TensorType::Q5_K || t == TensorType::Q6_K;
        const bool plain = t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16;
        // 2100: float rows of 3 K blocks (sweep_k_blocks' 1024 elements), a vector tail; BF16
        // and F16 also 1000, whose row tiles fit in L1 (swept rows outside)
        std::vector<std::int64_t> widths{kq ? 512 : plain ? 2100 : 96};
        if (t == TensorType::BF16 || t == TensorType::F16) widths.push_back(1000);
        for (const std::int64_t n : widths) {
            CAPTURE(n);
            const TypedWeights wts = make_weights(t, n_rows, n);
            const auto x = random_floats(static_cast<std::size_t>(n_tokens * n), 11, 2.0f);
            for (const Packing packing : {Packing::never, Packing::always}) {
                const WeightMatrix w = WeightMatrix::prepare(wts.info, packing);
                if (packing == Packing::always && !w.packed()) continue;  // no packed layout
                for (Isa isa : available_isas()) {
                    INFO(std::string(tensor_type_name(t)) + " " + std::string(isa_name(isa)) +
                         (w.packed() ? " packed" : " row-major"));
                    // Every token alone, one thread: the reference (the decode path).
                    std::vector<std::vector<float>> alone;
                    for (std::int64_t tk = 0; tk < n_tokens; ++tk) alone.push_back(run(w, x.data() + tk * n, 1, 1, isa));
                    for (const int threads : {1, 3}) {
                        for (const std::int64_t first : {0, 3}) {
                            for (const std::int64_t count : {1, 2, 4, 5, 7, 8, 9, 10, 17}) {
                                if (first + count > n_tokens) continue;
                                CAPTURE(threads, first, count);
                                const auto y = run(w, x.data() + first * n, count, threads, isa);
                                for (std::int64_t tk = 0; tk < count; ++tk) {
                                    const auto& want = alone[static_cast<std::size_t>(first + tk)];
                                    REQUIRE(std::memcmp(y.data() + tk * n_rows, want.data(),
                                                        want.size() * sizeof(float)) == 0);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("matmul_many: fused q/k/v-style products equal separate single-row products bitwise",
          "[matmul][batch-invariance]") {
    const std::int64_t n = 128, n_tokens = 11;
    for (TensorType t : {TensorType::Q4_0, TensorType::Q8_0, TensorType::F32}) {
        INFO(tensor_type_name(t));
        const TypedWeights a = make_weights(t, 32, n), b = make_weights(t, 16, n);
        const WeightMatrix wa = WeightMatrix::prepare(a.info), wb = WeightMatrix::prepare(b.info);
        const auto x = random_floats(static_cast<std::size_t>(n_tokens * n), 17);
        std::vector<std::byte> scratch(std::max(matmul_scratch_bytes(wa, n_tokens), matmul_scratch_bytes(wb, n_tokens)));
        std::vector<float> ya(static_cast<std::size_t>(n_tokens * 32)), yb(static_cast<std::size_t>(n_tokens * 16));
        const MatmulJob jobs[] = {{&wa, ya.data(), 32}, {&wb, yb.data(), 16}};
        matmul_many(jobs, x.data(), n_tokens, scratch, 2);
        for (std::int64_t tk = 0; tk < n_tokens; ++tk) {
            CAPTURE(tk);
            const auto ra = run(wa, x.data() + tk * n, 1, 1, active_isa());
            const auto rb = run(wb, x.data() + tk * n, 1, 1, active_isa());
            REQUIRE(std::memcmp(ya.data() + tk * 32, ra.data(), ra.size() * sizeof(float)) == 0);
            REQUIRE(std::memcmp(yb.data() + tk * 16, rb.data(), rb.size() * sizeof(float)) == 0);
        }
    }
}

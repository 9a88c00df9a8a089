// K-quants through the kernel framework: registration, WeightMatrix::prepare, matmul on every
// ISA (decode and prefill shapes) and dequantize_row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/dispatch.hpp"
#include "kernels/matmul.hpp"
#include "kquant_test_util.hpp"

using namespace kq_test;
using ember::TensorType;
using ember::kernels::Isa;

namespace {

ember::gguf::TensorInfo make_tensor(TensorType t, std::int64_t n_cols, std::int64_t n_rows,
                                    const std::vector<std::uint8_t>& bytes) {
    return ember::gguf::TensorInfo::matrix("test.weight", t, n_cols, n_rows, bytes.data(), bytes.size());
}

std::vector<Isa> available() {
    std::vector<Isa> out;
    for (int i = 0; i < ember::kernels::kIsaCount; ++i) {
        if (ember::kernels::isa_available(static_cast<Isa>(i))) out.push_back(static_cast<Isa>(i));
    }
    return out;
}

}  // namespace

TEST_CASE("K-quant types are registered for every ISA with Q8_K activations", "[kquants]") {
    for (TensorType t : kWeightTypes) {
        for (Isa isa : available()) {
            const auto* k = ember::kernels::type_kernels(t, isa);
            INFO(ember::tensor_type_name(t) << " " << ember::kernels::isa_name(isa));
            REQUIRE(k != nullptr);
            CHECK(k->type == t);
            CHECK(k->act_type == TensorType::Q8_K);
            CHECK(k->quantize_act != nullptr);
            CHECK(k->vec_dot != nullptr);
            CHECK(k->dequantize != nullptr);
        }
    }
    CHECK(ember::kernels::type_kernels(TensorType::Q2_K, Isa::scalar) == nullptr);
}

TEST_CASE("Q8_K activations: every ISA writes quantize_row_q8_k's bytes", "[kquants][isa]") {
    // One superblock per case: random; the largest magnitude negative; +a before -a and -a
    // before +a (the first counts); NaN and infinity lanes; all zero; all NaN; a denormal maximum
    // (iscale overflows to -inf); values whose scaled form ends in .5 (ties to even, and no
    // multiply-add may fuse the scaling into the rounding); -0.0 only.
    constexpr int kCases = 10;
    auto x = gaussian(kCases * kQK_K, 41);
    const auto block = [&](int c) { return x.data() + c * kQK_K; };
    block(1)[17] = -30.0f;
    block(2)[3] = 12.0f, block(2)[200] = -12.0f;
    block(3)[3] = -12.0f, block(3)[200] = 12.0f;
    block(4)[9] = std::numeric_limits<float>::quiet_NaN(), block(4)[10] = -std::numeric_limits<float>::infinity();
    std::fill_n(block(5), kQK_K, 0.0f);
    std::fill_n(block(6), kQK_K, std::numeric_limits<float>::quiet_NaN());
    std::fill_n(block(7), kQK_K, 0.0f);
    block(7)[100] = 1e-40f, block(7)[101] = -5e-41f;
    for (int j = 0; j < kQK_K; ++j) block(8)[j] = -2.7182817f * (static_cast<float>(j % 127) + 0.5f) / 127.f;
    block(8)[0] = -2.7182817f;  // x * iscale lands on or next to k + 0.5: a fused multiply-add rounds it otherwise
    std::fill_n(block(9), kQK_K, -0.0f);
    std::vector<BlockQ8K> want(kCases);
    ember::kernels::quantize_row_q8_k(x.data(), want.data(), kCases * kQK_K);
    for (Isa isa : available()) {
        for (TensorType t : kWeightTypes) {
            INFO(ember::tensor_type_name(t) << " " << ember::kernels::isa_name(isa));
            // 4 bytes past an allocation's start: BlockQ8K's alignment, not a vector's.
            std::vector<std::uint8_t> got(kCases * sizeof(BlockQ8K) + 4, 0x5A);
            ember::kernels::type_kernels(t, isa)->quantize_act(x.data(), got.data() + 4, kCases * kQK_K);
            for (int c = 0; c < kCases; ++c) {
                INFO("case " << c);
                CHECK(std::memcmp(got.data() + 4 + c * sizeof(BlockQ8K), &want[static_cast<std::size_t>(c)],
                                  sizeof(BlockQ8K)) == 0);
            }
        }
    }
}

TEST_CASE("K-quant matmul on every ISA matches the float reference", "[kquants]") {
    const std::int64_t n_cols = 3 * kQK_K, n_rows = 37;
    for (TensorType t : kWeightTypes) {
        std::vector<std::uint8_t> bytes;
        std::vector<float> wf;  // dequantized weights, row-major
        for (std::int64_t r = 0; r < n_rows; ++r) {
            const auto row = quantize(t, gaussian(n_cols, static_cast<std::uint32_t>(100 + r), 0.05f));
            const auto back = dequantize(t, row.data(), n_cols);
            bytes.insert(bytes.end(), row.begin(), row.end());
            wf.insert(wf.end(), back.begin(), back.end());
        }
        const auto info = make_tensor(t, n_cols, n_rows, bytes);
        const auto w = ember::kernels::WeightMatrix::prepare(info);
        CHECK(w.row_bytes() == bytes.size() / static_cast<std::size_t>(n_rows));

        // dequantize_row through the framework gives the reference rows.
        std::vector<float> row(static_cast<std::size_t>(n_cols));
        ember::kernels::dequantize_row(info, 5, row.data());
        for (std::int64_t c = 0; c < n_cols; ++c) CHECK(row[c] == wf[static_cast<std::size_t>(5 * n_cols + c)]);

        for (std::int64_t n_tokens : {1, 3, 70}) {
            const auto x = gaussian(n_cols * n_tokens, 7, 1.0f);
            std::vector<std::byte> scratch(ember::kernels::matmul_scratch_bytes(w, n_tokens));
            std::vector<float> y_scalar(static_cast<std::size_t>(n_rows * n_tokens));
            ember::kernels::matmul(w, x.data(), n_tokens, y_scalar.data(), n_rows, scratch, 2, Isa::scalar);
            for (Isa isa : available()) {
                const auto* k = ember::kernels::type_kernels(t, isa);
                const auto* parent = ember::kernels::type_kernels(t, ember::kernels::isa_parent(isa));
                if (isa != Isa::scalar && k->vec_dot == parent->vec_dot && k->tile == parent->tile) continue;  // tested as the parent
                std::vector<float> y(static_cast<std::size_t>(n_rows * n_tokens));
                ember::kernels::matmul(w, x.data(), n_tokens, y.data(), n_rows, scratch, 2, isa);
                for (std::int64_t tk = 0; tk < n_tokens; ++tk) {
                    for (std::int64_t r = 0; r < n_rows; ++r) {
                        double ref = 0, mag = 0;
                        for (std::int64_t c = 0; c < n_cols; ++c) {
                            const double p = double(wf[static_cast<std::size_t>(r * n_cols + c)]) *
                                             x[static_cast<std::size_t>(tk * n_cols + c)];
                            ref += p;
                            mag += std::fabs(p);
                        }
                        const float got = y[static_cast<std::size_t>(tk * n_rows + r)];
                        INFO(ember::tensor_type_name(t) << " " << ember::kernels::isa_name(isa)
                             << " tokens=" << n_tokens << " t=" << tk << " r=" << r);
                        // Activation quantization to 8 bits: well under 1% of sum |w*x|.
                        CHECK(std::fabs(got - ref) <= 0.01 * mag);
                        CHECK(std::fabs(got - y_scalar[static_cast<std::size_t>(tk * n_rows + r)]) <= 2e-6 * mag);
                    }
                }
            }
        }
    }
}

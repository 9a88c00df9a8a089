// K-quant block layouts, scale packing, Q8_K activations and quantize/dequantize round trips.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "ember/error.hpp"
#include "gguf/gguf_file.hpp"
#include "kernels/fp16.hpp"
#include "kernels/quants.hpp"
#include "kquant_test_util.hpp"
#include "support/shared_data.hpp"

using namespace kq_test;
using ember::TensorType;

TEST_CASE("K-quant block sizes match the tensor type table", "[kquants]") {
    const struct {
        TensorType type;
        std::size_t bytes;
    } cases[] = {{TensorType::Q4_K, sizeof(BlockQ4K)}, {TensorType::Q5_K, sizeof(BlockQ5K)},
                 {TensorType::Q6_K, sizeof(BlockQ6K)}, {TensorType::Q8_K, sizeof(BlockQ8K)}};
    for (const auto& c : cases) {
        const auto traits = ember::tensor_type_traits(static_cast<std::uint32_t>(c.type));
        REQUIRE(traits);
        CHECK(traits->block_size == kQK_K);
        CHECK(traits->block_bytes == static_cast<std::int64_t>(c.bytes));
    }
    CHECK(sizeof(BlockQ4K) == 144);
    CHECK(sizeof(BlockQ5K) == 176);
    CHECK(sizeof(BlockQ6K) == 210);
    CHECK(sizeof(BlockQ8K) == 292);
    // Field offsets as in ggml-common.h.
    CHECK(offsetof(BlockQ4K, scales) == 4);
    CHECK(offsetof(BlockQ4K, qs) == 16);
    CHECK(offsetof(BlockQ5K, qh) == 16);
    CHECK(offsetof(BlockQ5K, qs) == 48);
    CHECK(offsetof(BlockQ6K, qh) == 128);
    CHECK(offsetof(BlockQ6K, scales) == 192);
    CHECK(offsetof(BlockQ6K, d) == 208);
    CHECK(offsetof(BlockQ8K, qs) == 4);
    CHECK(offsetof(BlockQ8K, bsums) == 260);
}

TEST_CASE("6-bit scale packing: word unpack equals get_scale_min_k4 and inverts packing", "[kquants]") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 1000; ++trial) {
        std::uint8_t packed[12];
        for (auto& b : packed) b = static_cast<std::uint8_t>(rng());
        std::uint8_t words[16];
        kq_unpack_scales_k4(packed, words);
        for (int j = 0; j < 8; ++j) {
            std::uint8_t sc, m;
            kq_scale_min_k4(j, packed, &sc, &m);
            CHECK(words[j] == sc);
            CHECK(words[8 + j] == m);
            CHECK(sc < 64);
            CHECK(m < 64);
        }
    }
    // Packing rule: j < 4 in the low 6 bits of bytes j / j+4; j >= 4 in the nibbles of byte
    // j+4 with the top two bits in bytes j-4 (scale) and j (min).
    std::uint8_t packed[12] = {};
    const std::uint8_t sc[8] = {1, 63, 17, 32, 45, 2, 60, 33};
    const std::uint8_t mn[8] = {0, 5, 63, 48, 31, 62, 16, 7};
    for (int j = 0; j < 4; ++j) {
        packed[j] = sc[j];
        packed[j + 4] = mn[j];
    }
    for (int j = 4; j < 8; ++j) {
        packed[j + 4] = static_cast<std::uint8_t>((sc[j] & 0xF) | ((mn[j] & 0xF) << 4));
        packed[j - 4] |= static_cast<std::uint8_t>((sc[j] >> 4) << 6);
        packed[j] |= static_cast<std::uint8_t>((mn[j] >> 4) << 6);
    }
    for (int j = 0; j < 8; ++j) {
        std::uint8_t s, m;
        kq_scale_min_k4(j, packed, &s, &m);
        CHECK(s == sc[j]);
        CHECK(m == mn[j]);
    }
}

TEST_CASE("Q4_K/Q5_K/Q6_K dequantize follows the ggml element order", "[kquants]") {
    // Hand-built blocks, decoded element by element from the layout description.
    std::mt19937 rng(11);
    BlockQ4K b4{};
    BlockQ5K b5{};
    BlockQ6K b6{};
    for (auto& v : b4.scales) v = static_cast<std::uint8_t>(rng());
    for (auto& v : b4.qs) v = static_cast<std::uint8_t>(rng());
    std::memcpy(b5.scales, b4.scales, 12);
    std::memcpy(b5.qs, b4.qs, 128);
    for (auto& v : b5.qh) v = static_cast<std::uint8_t>(rng());
    for (auto& v : b6.ql) v = static_cast<std::uint8_t>(rng());
    for (auto& v : b6.qh) v = static_cast<std::uint8_t>(rng());
    for (auto& v : b6.scales) v = static_cast<std::int8_t>(rng());
    b4.d = b5.d = b6.d = ember::kernels::fp32_to_fp16(0.5f);     // exact in fp16
    b4.dmin = b5.dmin = ember::kernels::fp32_to_fp16(0.25f);

    float y4[256], y5[256], y6[256];
    dequantize_row_q4_k(&b4, y4, 256);
    dequantize_row_q5_k(&b5, y5, 256);
    dequantize_row_q6_k(&b6, y6, 256);
    for (int e = 0; e < 256; ++e) {
        const int sub = e / 32, k = e / 64, l = e % 32;
        const bool high = (e % 64) >= 32;
        std::uint8_t sc, m;
        kq_scale_min_k4(sub, b4.scales, &sc, &m);
        const int nib = high ? b4.qs[32 * k + l] >> 4 : b4.qs[32 * k + l] & 0xF;
        const int bit5 = (b5.qh[l] >> sub) & 1;  // sub-block j uses bit j of qh
        CHECK(y4[e] == 0.5f * sc * nib - 0.25f * m);
        CHECK(y5[e] == 0.5f * sc * (nib + 16 * bit5) - 0.25f * m);

        const int h = e / 128, g = (e % 128) / 32;  // Q6_K: half, group of 32 within the half
        const std::uint8_t lbyte = b6.ql[64 * h + 32 * (g & 1) + l];
        const int low4 = g < 2 ? (lbyte & 0xF) : (lbyte >> 4);
        const int high2 = (b6.qh[32 * h + l] >> (2 * g)) & 3;
        CHECK(y6[e] == 0.5f * b6.scales[e / 16] * ((low4 | (high2 << 4)) - 32));
    }
}

TEST_CASE("Q8_K activations: ggml reference semantics", "[kquants]") {
    auto x = gaussian(4 * kQK_K, 3);
    x[5] = -9.0f;  // block 0: the largest magnitude is negative
    x[300] = 7.5f; // block 1: positive
    std::vector<BlockQ8K> q(4);
    quantize_row_q8_k(x.data(), q.data(), 4 * kQK_K);
    for (int i = 0; i < 4; ++i) {
        float max = 0, amax = 0;
        for (int j = 0; j < kQK_K; ++j) {
            const float v = x[static_cast<std::size_t>(i * kQK_K + j)];
            if (std::fabs(v) > amax) amax = std::fabs(v), max = v;
        }
        const float iscale = -127.f / max;
        CHECK(q[static_cast<std::size_t>(i)].d == 1 / iscale);
        for (int j = 0; j < kQK_K; ++j) {
            const float v = x[static_cast<std::size_t>(i * kQK_K + j)] * iscale;
            const int expect = std::min(127, static_cast<int>(std::nearbyint(v)));
            CHECK(q[static_cast<std::size_t>(i)].qs[j] == expect);
        }
        for (int g = 0; g < 16; ++g) {
            int s = 0;
            for (int j = 0; j < 16; ++j) s += q[static_cast<std::size_t>(i)].qs[16 * g + j];
            CHECK(q[static_cast<std::size_t>(i)].bsums[g] == s);
        }
    }
    CHECK(q[0].qs[5] == -127);  // the extreme maps to -127 (d has the opposite sign of max)
    CHECK(q[0].d > 0);
    CHECK(q[1].qs[300 - 256] == -127);
    CHECK(q[1].d < 0);

    std::vector<float> zeros(kQK_K, 0.0f);
    BlockQ8K z;
    std::memset(&z, 0x5A, sizeof z);
    quantize_row_q8_k(zeros.data(), &z, kQK_K);
    CHECK(z.d == 0.0f);
    for (int j = 0; j < kQK_K; ++j) CHECK(z.qs[j] == 0);
    for (int g = 0; g < 16; ++g) CHECK(z.bsums[g] == 0);
}

// Relative RMSE of dequantize(quantize(x)) for Gaussian rows with outliers: ggml's algorithms
// reach 0.077 (Q4_K), 0.039 (Q5_K), 0.0196 (Q6_K), 0.0107 (Q8_K: one scale per 256 values, so
// the outliers cost most); the bounds leave about 10% margin.
constexpr double kMaxRelRmseQ4K = 0.085;
constexpr double kMaxRelRmseQ5K = 0.043;
constexpr double kMaxRelRmseQ6K = 0.022;
constexpr double kMaxRelRmseQ8K = 0.012;

TEST_CASE("K-quant round trip error is bounded", "[kquants]") {
    const std::int64_t n = 64 * kQK_K;
    const auto x = gaussian(n, 42, 0.02f);
    const struct {
        TensorType type;
        double bound;
    } cases[] = {{TensorType::Q4_K, kMaxRelRmseQ4K}, {TensorType::Q5_K, kMaxRelRmseQ5K},
                 {TensorType::Q6_K, kMaxRelRmseQ6K}, {TensorType::Q8_K, kMaxRelRmseQ8K}};
    double prev = 1.0;
    for (const auto& c : cases) {
        const auto q = quantize(c.type, x);
        const auto y = dequantize(c.type, q.data(), n);
        const double err = relative_rmse(x, y);
        INFO(ember::tensor_type_name(c.type) << " relative RMSE " << err);
        CHECK(err < c.bound);
        CHECK(err > c.bound / 4);  // the bounds are tight enough to notice a regression
        CHECK(err < prev);         // more bits, less error
        prev = err;
    }
}

TEST_CASE("K-quant quantizers handle degenerate blocks", "[kquants]") {
    const std::int64_t n = 4 * kQK_K;
    std::vector<float> x(static_cast<std::size_t>(n), 0.0f);
    // block 0: zeros; block 1: a constant; block 2: one spike; block 3: all negative
    for (int j = 0; j < kQK_K; ++j) x[static_cast<std::size_t>(kQK_K + j)] = 0.75f;
    x[2 * kQK_K + 77] = 3.0f;
    for (int j = 0; j < kQK_K; ++j) x[static_cast<std::size_t>(3 * kQK_K + j)] = -1.0f - 0.01f * j;
    for (TensorType type : kWeightTypes) {
        const auto q = quantize(type, x);
        const auto y = dequantize(type, q.data(), n);
        INFO(ember::tensor_type_name(type));
        for (int j = 0; j < kQK_K; ++j) CHECK(y[static_cast<std::size_t>(j)] == 0.0f);
        for (std::size_t i = 0; i < y.size(); ++i) REQUIRE(std::isfinite(y[i]));
        // The spike and its zero neighbours survive well.
        CHECK(y[2 * kQK_K + 77] == Approx(3.0f).epsilon(0.02));
        CHECK(std::fabs(y[2 * kQK_K + 78]) < 0.05f);
        // Measured 0.0027 (Q4_K), 0.0015 (Q5_K), 0.0081 (Q6_K: no per-block minimum, so the
        // all-negative ramp costs it more than the asymmetric types); bounds with ~25% margin.
        const double bound = type == TensorType::Q4_K ? 0.0034 : type == TensorType::Q5_K ? 0.0019 : 0.010;
        CHECK(relative_rmse(std::vector<float>(x.begin() + kQK_K, x.end()),
                            std::vector<float>(y.begin() + kQK_K, y.end())) < bound);
    }
}

TEST_CASE("K-quant quantizers keep tiny and huge magnitudes", "[kquants]") {
    // Within the fp16 range of the super-scales (below about 1e-5 they underflow, as in ggml).
    // From sigma 1e-2 up, each type keeps its round-trip bound above (the error is scale-free).
    // At sigma 1e-4 the fp16 super-scale d falls into fp16's subnormal range (d is about 1e-7 for
    // Q6_K, max|scale| / 128), whose absolute step of 6e-8 is then a large relative error:
    // measured 0.084 (Q4_K), 0.054 (Q5_K), 0.088 (Q6_K), as in ggml.
    for (float sigma : {1e-4f, 1e-2f, 30.0f, 3000.0f}) {
        const auto x = gaussian(8 * kQK_K, 5, sigma);
        for (TensorType type : kWeightTypes) {
            const auto q = quantize(type, x);
            const auto y = dequantize(type, q.data(), static_cast<std::int64_t>(x.size()));
            INFO(ember::tensor_type_name(type) << " sigma " << sigma);
            const bool subnormal_scale = sigma < 1e-3f;
            const double bound = type == TensorType::Q4_K   ? (subnormal_scale ? 0.095 : kMaxRelRmseQ4K)
                                 : type == TensorType::Q5_K ? (subnormal_scale ? 0.062 : kMaxRelRmseQ5K)
                                                            : (subnormal_scale ? 0.1 : kMaxRelRmseQ6K);
            CHECK(relative_rmse(x, y) < bound);
        }
    }
    const auto tiny = gaussian(kQK_K, 6, 1e-7f);
    for (TensorType type : kWeightTypes) {
        const auto y = dequantize(type, quantize(type, tiny).data(), kQK_K);
        for (float v : y) REQUIRE(std::isfinite(v));
    }
}

TEST_CASE("K-quant row functions reject lengths that are not whole superblocks", "[kquants]") {
    std::vector<float> x(300, 1.0f);
    std::vector<BlockQ4K> b(2);
    CHECK_THROWS_AS(quantize_row_q4_k(x.data(), b.data(), 300), ember::Error);
    CHECK_THROWS_AS(dequantize_row_q4_k(b.data(), x.data(), 100), ember::Error);
}

TEST_CASE("quantize_row(type) writes K-quant rows with the reference quantizers", "[kquants]") {
    const auto x = gaussian(3 * kQK_K, 8, 0.1f);
    for (TensorType type : kWeightTypes) {
        const auto expect = quantize(type, x);
        std::vector<std::uint8_t> got(expect.size(), 0xAB);
        ember::kernels::quantize_row(type, x.data(), got.data(), static_cast<std::int64_t>(x.size()));
        INFO(ember::tensor_type_name(type));
        CHECK(got == expect);
    }
}

TEST_CASE("the reference quantizers reproduce llama-quantize's rows of quant-ref", "[kquants][quantize]") {
    // Every quantized tensor of llama-quantize's files against quantize_row of the F32 original,
    // row by row: the quantizers' float order on this platform (ARM64 once fused their products
    // and sums into FMAs, which changed ties), apart from the tool's file writing.
    EMBER_REQUIRE_SHARED("models/quant-ref/kq-f32.gguf");
    const auto f32 = ember::gguf::File::open(ember_test::shared_file("models/quant-ref/kq-f32.gguf").string());
    int checked = 0;
    for (const char* name : {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K_S", "Q5_K_S", "Q6_K"}) {
        const std::string ref = std::string("models/quant-ref/kq-") + name + ".gguf";
        if (EMBER_SHARED_MISSING(ref)) continue;
        const auto q = ember::gguf::File::open(ember_test::shared_file(ref).string());
        for (const auto& t : q.tensors()) {
            if (t.type == TensorType::F32 || t.type == TensorType::F16 || t.type == TensorType::BF16) continue;
            const auto* src = f32.find_tensor(t.name);
            REQUIRE(src != nullptr);
            REQUIRE(src->type == TensorType::F32);
            INFO(name << " " << t.name << " as " << ember::tensor_type_name(t.type));
            const std::int64_t n = t.ne[0];
            const std::size_t row_bytes = t.row_bytes();
            std::vector<std::uint8_t> row(row_bytes);
            std::vector<float> x(static_cast<std::size_t>(n));
            for (std::int64_t r = 0; r < t.n_rows(); ++r) {
                std::memcpy(x.data(), src->data + static_cast<std::size_t>(r * n) * sizeof(float), x.size() * sizeof(float));
                quantize_row(t.type, x.data(), row.data(), n);
                if (std::memcmp(row.data(), t.data + static_cast<std::size_t>(r) * row_bytes, row_bytes) != 0) {
                    FAIL_CHECK("row " << r << " differs");
                    break;
                }
            }
            ++checked;
        }
    }
    CHECK(checked > 0);
}

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "ember/error.hpp"
#include "kernel_test_util.hpp"
#include "kernels/fp16.hpp"
#include "kernels/quants.hpp"
#include "kernels/type_kernels.hpp"
#include "gguf/tensor_type.hpp"

using namespace ember;
using namespace ember::kernels;

namespace {

std::vector<std::uint8_t> quantize(TensorType t, const std::vector<float>& x) {
    const auto tr = tensor_type_traits(static_cast<std::uint32_t>(t));
    std::vector<std::uint8_t> q(x.size() / tr->block_size * tr->block_bytes);
    quantize_row(t, x.data(), q.data(), static_cast<std::int64_t>(x.size()));
    return q;
}

}  // namespace

TEST_CASE("legacy quantize/dequantize round trip stays within half a step", "[quants]") {
    struct Case { TensorType type; int levels; };  // levels: quantization steps across the range
    const Case cases[] = {{TensorType::Q4_0, 16}, {TensorType::Q4_1, 15}, {TensorType::Q5_0, 32},
                          {TensorType::Q5_1, 31}, {TensorType::Q8_0, 254}};
    const auto x = kernel_test::random_floats(32 * 40, 11, 2.0f);
    for (const auto& c : cases) {
        INFO(tensor_type_name(c.type));
        const auto q = quantize(c.type, x);
        std::vector<float> back(x.size());
        type_kernels(c.type, Isa::scalar)->dequantize(q.data(), back.data(), static_cast<std::int64_t>(x.size()));
        for (std::size_t b = 0; b < x.size() / 32; ++b) {
            float lo = x[b * 32], hi = lo, amax = 0;
            for (int j = 0; j < 32; ++j) {
                lo = std::min(lo, x[b * 32 + j]);
                hi = std::max(hi, x[b * 32 + j]);
                amax = std::max(amax, std::fabs(x[b * 32 + j]));
            }
            // Symmetric types span [-amax, amax] over `levels` steps; asymmetric [min, max].
            const bool asym = c.type == TensorType::Q4_1 || c.type == TensorType::Q5_1;
            const float step = asym ? (hi - lo) / static_cast<float>(c.levels)
                                    : 2 * amax / static_cast<float>(c.levels);
            // ggml's Q4_0/Q5_0 put the largest magnitude at -8d / -16d, so values on the other
            // side clamp at 7d / 15d: up to a full step. + fp16 rounding of d (and m).
            const bool clamps = c.type == TensorType::Q4_0 || c.type == TensorType::Q5_0;
            const float bound = (clamps ? 1.0f : 0.5f) * step + amax * 2e-3f + 1e-6f;
            for (int j = 0; j < 32; ++j) REQUIRE(std::fabs(back[b * 32 + j] - x[b * 32 + j]) <= bound);
        }
    }
}

TEST_CASE("weight quantizers round like ggml's reference quantizers", "[quants]") {
    // Q4_0: d = (value of largest magnitude) / -8, q = min(15, trunc(x / d + 8.5)).
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16) * 0.25f;  // -4 .. 3.75
    const auto q4 = quantize(TensorType::Q4_0, x);
    BlockQ4_0 b4;
    std::memcpy(&b4, q4.data(), sizeof b4);
    CHECK(fp16_to_fp32(b4.d) == 0.5f);  // -4 / -8
    // x = -4 -> -8 + 8.5 = 0.5 -> 0 ; x = 3.75 -> 7.5 + 8.5 = 16 -> min 15 ; x = 0 -> 8
    CHECK((b4.qs[0] & 0x0f) == 0);
    CHECK((b4.qs[15] >> 4) == 15);
    CHECK((b4.qs[0] >> 4) == 8);

    // Q8_0 weights use roundf (half away from zero): 2.5 -> 3.
    std::vector<float> y(32, 0.0f);
    y[0] = 127.0f;
    y[1] = 2.5f;
    y[2] = -2.5f;
    const auto q8 = quantize(TensorType::Q8_0, y);
    BlockQ8_0 b8;
    std::memcpy(&b8, q8.data(), sizeof b8);
    CHECK(b8.qs[0] == 127);
    CHECK(b8.qs[1] == 3);
    CHECK(b8.qs[2] == -3);

    // Q5_1: d = (max - min) / 31, m = min, q = trunc((x - min) / d + 0.5).
    std::vector<float> z(32);
    for (int j = 0; j < 32; ++j) z[j] = 1.0f + static_cast<float>(j) * 0.5f;  // 1 .. 16.5
    const auto q5 = quantize(TensorType::Q5_1, z);
    BlockQ5_1 b5;
    std::memcpy(&b5, q5.data(), sizeof b5);
    CHECK(fp16_to_fp32(b5.d) == 0.5f);
    CHECK(fp16_to_fp32(b5.m) == 1.0f);
    std::uint32_t qh;
    std::memcpy(&qh, b5.qh, 4);
    CHECK((b5.qs[0] & 0x0f) == 0);
    CHECK((b5.qs[15] >> 4) == (31 & 0x0f));
    CHECK(((qh >> 31) & 1u) == 1u);  // element 31 = 31 has its fifth bit set
    CHECK(((qh >> 15) & 1u) == 0u);  // element 15 = 15 does not
}

TEST_CASE("activation quantizers follow ggml's x86 runtime rounding", "[quants]") {
    std::vector<float> x(64, 0.0f);
    x[0] = 127.0f;  // amax 127: d = 1, id = 1
    x[1] = 2.5f;    // ties to even -> 2
    x[2] = 3.5f;    // -> 4
    x[3] = -2.5f;   // -> -2
    x[4] = 0.49f;
    // second block all zeros: d = 0, all q = 0
    std::vector<BlockQ8_0> a(2);
    quantize_act_q8_0(x.data(), a.data(), 64);
    CHECK(fp16_to_fp32(a[0].d) == 1.0f);
    CHECK(a[0].qs[0] == 127);
    CHECK(a[0].qs[1] == 2);
    CHECK(a[0].qs[2] == 4);
    CHECK(a[0].qs[3] == -2);
    CHECK(a[0].qs[4] == 0);
    CHECK(a[1].d == 0);
    for (int j = 0; j < 32; ++j) CHECK(a[1].qs[j] == 0);

    std::vector<BlockQ8_1> b(2);
    quantize_act_q8_1(x.data(), b.data(), 64);
    CHECK(std::memcmp(b[0].qs, a[0].qs, 32) == 0);
    CHECK(fp16_to_fp32(b[0].s) == 127.0f + 2 + 4 - 2);  // d * sum(q)

    // Nonzero scale: id = 127 / amax (not 1 / d).
    const auto r = kernel_test::random_floats(32 * 8, 5);
    std::vector<BlockQ8_0> c(8);
    quantize_act_q8_0(r.data(), c.data(), 32 * 8);
    for (int blk = 0; blk < 8; ++blk) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(r[blk * 32 + j]));
        REQUIRE(c[blk].d == fp32_to_fp16(amax / 127.f));
        for (int j = 0; j < 32; ++j) {
            REQUIRE(c[blk].qs[j] == static_cast<int>(std::nearbyint(r[blk * 32 + j] * (127.f / amax))));
        }
    }
}

TEST_CASE("quantize_row rejects unsupported types and partial blocks", "[quants]") {
    std::vector<float> x(48, 1.0f);
    std::vector<std::uint8_t> out(256);
    CHECK_THROWS_AS(quantize_row(TensorType::Q4_0, x.data(), out.data(), 48), ember::Error);
    CHECK_THROWS_AS(quantize_row(TensorType::IQ2_XXS, x.data(), out.data(), 256), ember::Error);
    CHECK_NOTHROW(quantize_row(TensorType::F16, x.data(), out.data(), 48));
}

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "kernel_test_util.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/fp16.hpp"

using namespace ember::kernels;

namespace {
// The CPU's own converters (F16C on x86-64, fcvt on ARM64) as an independent reference.
#if defined(__x86_64__)
bool hw_available() { return cpu_features().avx2; }  // includes F16C and the OS's AVX state
__attribute__((target("f16c"))) std::uint16_t hw_fp32_to_fp16(float f) {
    return static_cast<std::uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}
__attribute__((target("f16c"))) float hw_fp16_to_fp32(std::uint16_t h) { return _cvtsh_ss(h); }
#elif defined(__aarch64__)
bool hw_available() { return true; }
std::uint16_t hw_fp32_to_fp16(float f) {
    return vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(vdupq_n_f32(f))), 0);
}
float hw_fp16_to_fp32(std::uint16_t h) { return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0); }
#else
bool hw_available() { return false; }
std::uint16_t hw_fp32_to_fp16(float) { return 0; }
float hw_fp16_to_fp32(std::uint16_t) { return 0.0f; }
#endif
bool is_nan16(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
}  // namespace

TEST_CASE("fp16 -> fp32 is exact for all 65536 values and round-trips", "[fp16]") {
    const bool hw = hw_available();
    for (std::uint32_t i = 0; i < 65536; ++i) {
        const auto h = static_cast<std::uint16_t>(i);
        const float f = fp16_to_fp32(h);
        if (is_nan16(h)) {
            REQUIRE(std::isnan(f));
            REQUIRE(is_nan16(fp32_to_fp16(f)));
            continue;
        }
        if (hw) REQUIRE(std::bit_cast<std::uint32_t>(f) == std::bit_cast<std::uint32_t>(hw_fp16_to_fp32(h)));
        REQUIRE(fp32_to_fp16(f) == h);
    }
    CHECK(fp16_to_fp32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
    CHECK(fp16_to_fp32(0x7bff) == 65504.0f);
    CHECK(std::isinf(fp16_to_fp32(0xfc00)));
}

TEST_CASE("fp32 -> fp16 rounds to nearest even at every tie and neighbour", "[fp16]") {
    // For each pair of adjacent finite halves, test the midpoint and its float neighbours.
    for (std::uint32_t i = 0; i < 0x7bff; ++i) {
        for (std::uint32_t sign : {0u, 0x8000u}) {
            const auto lo = static_cast<std::uint16_t>(i | sign), hi = static_cast<std::uint16_t>((i + 1) | sign);
            const float a = fp16_to_fp32(lo), b = fp16_to_fp32(hi);
            const float mid = (a + b) / 2;  // exact in float
            const std::uint16_t even = (i & 1u) ? hi : lo;
            REQUIRE(fp32_to_fp16(mid) == even);
            REQUIRE(fp32_to_fp16(std::nextafter(mid, a)) == lo);
            REQUIRE(fp32_to_fp16(std::nextafter(mid, b)) == hi);
        }
    }
    CHECK(fp32_to_fp16(65519.0f) == 0x7bff);
    CHECK(fp32_to_fp16(65520.0f) == 0x7c00);  // ties to even: overflow to inf
    CHECK(fp32_to_fp16(1e10f) == 0x7c00);
    CHECK(fp32_to_fp16(-INFINITY) == 0xfc00);
    CHECK(fp32_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);  // tie between 0 and the min subnormal
    CHECK(fp32_to_fp16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
    CHECK(fp32_to_fp16(-0.0f) == 0x8000);
    CHECK(is_nan16(fp32_to_fp16(NAN)));
}

TEST_CASE("fp32 -> fp16 matches the CPU's converter on random and special floats", "[fp16]") {
    if (!hw_available()) { WARN("no hardware fp16 converter: skipped"); return; }
    std::mt19937 rng(7);
    for (int k = 0; k < 500000; ++k) {
        const std::uint32_t bits = rng();
        const float f = std::bit_cast<float>(bits);
        const std::uint16_t ours = fp32_to_fp16(f), theirs = hw_fp32_to_fp16(f);
        if (std::isnan(f)) {
            REQUIRE(is_nan16(ours));
        } else {
            REQUIRE(ours == theirs);
        }
    }
}

TEST_CASE("bf16 is the upper half of fp32, rounded to nearest even", "[bf16]") {
    for (std::uint32_t i = 0; i < 65536; ++i) {
        const auto h = static_cast<std::uint16_t>(i);
        const float f = bf16_to_fp32(h);
        REQUIRE(std::bit_cast<std::uint32_t>(f) == (i << 16));
        if (std::isnan(f)) {
            REQUIRE(std::isnan(bf16_to_fp32(fp32_to_bf16(f))));
        } else {
            REQUIRE(fp32_to_bf16(f) == h);
            // Ties: lower half exactly 0x8000 rounds to the even neighbour.
            const float tie = std::bit_cast<float>((i << 16) | 0x8000u);
            if (!std::isinf(f)) {
                const std::uint16_t expect = (i & 1u) ? static_cast<std::uint16_t>(i + 1) : h;
                REQUIRE(fp32_to_bf16(tie) == expect);
                REQUIRE(fp32_to_bf16(std::bit_cast<float>((i << 16) | 0x7fffu)) == h);
                REQUIRE(fp32_to_bf16(std::bit_cast<float>((i << 16) | 0x8001u)) ==
                        static_cast<std::uint16_t>(i + 1));
            }
        }
    }
    CHECK(std::isnan(bf16_to_fp32(fp32_to_bf16(std::bit_cast<float>(0x7f800001u)))));  // no nan -> inf
}

TEST_CASE("every ISA narrows activations to bf16 as fp32_to_bf16 does, NaN and infinities included",
          "[bf16]") {
    // Every upper half with lower halves at the rounding edges, then odd lengths for the tails.
    std::vector<float> x;
    for (std::uint32_t i = 0; i < 65536; ++i) {
        for (std::uint32_t low : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
            x.push_back(std::bit_cast<float>((i << 16) | low));
        }
    }
    std::vector<std::uint16_t> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = fp32_to_bf16(x[i]);
    for (ember::kernels::Isa isa : kernel_test::available_isas()) {
        INFO(ember::kernels::isa_name(isa));
        const auto* k = ember::kernels::type_kernels(ember::TensorType::BF16, isa);
        REQUIRE(k != nullptr);
        for (std::int64_t n : {std::int64_t(x.size()) - 5, std::int64_t{37}, std::int64_t{1}}) {
            std::vector<std::uint16_t> got(static_cast<std::size_t>(n), 0xdead);
            k->quantize_act(x.data() + 5, got.data(), n);
            for (std::int64_t i = 0; i < n; ++i) {
                if (got[i] != want[i + 5]) FAIL("input bits " << std::bit_cast<std::uint32_t>(x[i + 5]));
            }
        }
    }
}

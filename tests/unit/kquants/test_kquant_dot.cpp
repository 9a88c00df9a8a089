// K-quant x Q8_K dot products: every ISA variant this CPU runs against the scalar twin, and the
// scalar twin against a float reference (dequantized weights . dequantized activations).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/dispatch.hpp"
#include "kernels/fp16.hpp"
#include "kquant_test_util.hpp"

using namespace kq_test;
using ember::TensorType;

namespace {

// SIMD and scalar sum the same int32 superblock sums; only the float accumulation differs.
constexpr double kIsaRelTol = 2e-6;
// The scalar dot against double-precision sum of dequantized products, relative to the sum of
// absolute products: float rounding of d*sc, d*sumi and the running sum.
constexpr double kFloatRefRelTol = 1e-5;

using ember::kernels::Isa;
using ember::kernels::isa_available;
using ember::kernels::isa_name;
using ember::kernels::type_kernels;

/// Every SIMD ISA this CPU runs (the scalar twin is the reference).
std::vector<Isa> simd_isas() {
    std::vector<Isa> out;
    for (int i = 1; i < ember::kernels::kIsaCount; ++i) {
        if (isa_available(static_cast<Isa>(i))) out.push_back(static_cast<Isa>(i));
    }
    return out;
}

VecDotFn scalar_dot(TensorType t) { return type_kernels(t, Isa::scalar)->vec_dot; }

std::size_t block_bytes(TensorType t) {
    return static_cast<std::size_t>(ember::tensor_type_traits(static_cast<std::uint32_t>(t))->block_bytes);
}

/// Random raw blocks (every bit pattern of scales and quants) with sane fp16 super-scales.
std::vector<std::uint8_t> random_blocks(TensorType t, std::int64_t nb, std::mt19937& rng) {
    std::vector<std::uint8_t> out(block_bytes(t) * static_cast<std::size_t>(nb));
    for (auto& b : out) b = static_cast<std::uint8_t>(rng());
    std::uniform_real_distribution<float> scale(-0.01f, 0.01f);
    for (std::int64_t i = 0; i < nb; ++i) {
        std::uint8_t* blk = out.data() + static_cast<std::size_t>(i) * block_bytes(t);
        const std::uint16_t d = ember::kernels::fp32_to_fp16(scale(rng));
        const std::uint16_t dmin = ember::kernels::fp32_to_fp16(scale(rng));
        if (t == TensorType::Q6_K) {
            std::memcpy(blk + offsetof(BlockQ6K, d), &d, 2);
        } else {
            std::memcpy(blk, &d, 2);
            std::memcpy(blk + 2, &dmin, 2);
        }
    }
    return out;
}

/// Sum of |w_i * a_i| and the double-precision reference from dequantized rows.
void float_reference(TensorType t, const std::uint8_t* w, const BlockQ8K* a, std::int64_t n,
                     double* ref, double* mag) {
    const auto wf = dequantize(t, w, n);
    std::vector<float> af(static_cast<std::size_t>(n));
    dequantize_row_q8_k(a, af.data(), n);
    *ref = 0;
    *mag = 0;
    for (std::size_t i = 0; i < wf.size(); ++i) {
        *ref += double(wf[i]) * af[i];
        *mag += std::fabs(double(wf[i]) * af[i]);
    }
}

}  // namespace

TEST_CASE("K-quant dot products: every ISA matches the scalar twin", "[kquants][isa]") {
    std::mt19937 rng(1234);
    int n_checked = 0;
    for (TensorType t : kWeightTypes) {
        for (std::int64_t nb = 0; nb <= 8; ++nb) {
            const std::int64_t n = nb * kQK_K;
            for (int source = 0; source < 2; ++source) {  // 0: quantized data, 1: random bits
                std::vector<std::uint8_t> w;
                if (source == 0) {
                    w = quantize(t, gaussian(n, static_cast<std::uint32_t>(rng()), 0.05f));
                } else {
                    w = random_blocks(t, nb, rng);
                }
                const auto aq = quantize(TensorType::Q8_K, gaussian(n, static_cast<std::uint32_t>(rng())));
                for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{7}}) {
                    // Misaligned copies of both operands.
                    std::vector<std::uint8_t> wbuf(w.size() + 64), abuf(aq.size() + 64);
                    if (!w.empty()) std::memcpy(wbuf.data() + offset, w.data(), w.size());
                    if (!aq.empty()) std::memcpy(abuf.data() + 3 * offset, aq.data(), aq.size());
                    const void* wp = wbuf.data() + offset;
                    const void* ap = abuf.data() + 3 * offset;
                    const float expect = scalar_dot(t)(n, w.data(), aq.data());
                    double mag = 0, ref = 0;
                    float_reference(t, w.data(), reinterpret_cast<const BlockQ8K*>(aq.data()), n, &ref, &mag);
                    for (Isa isa : simd_isas()) {
                        const float got = type_kernels(t, isa)->vec_dot(n, wp, ap);
                        INFO(ember::tensor_type_name(t) << " " << isa_name(isa) << " nb=" << nb
                             << " source=" << source << " offset=" << offset);
                        CHECK(std::fabs(double(got) - expect) <= kIsaRelTol * mag + 1e-30);
                        ++n_checked;
                    }
                }
            }
        }
    }
    if (n_checked == 0) WARN("no SIMD variant runs on this CPU: only the scalar path was tested");
}

TEST_CASE("K-quant scalar dot matches dequantized float products", "[kquants]") {
    std::mt19937 rng(99);
    for (TensorType t : kWeightTypes) {
        for (std::int64_t nb : {1, 2, 5, 16}) {
            const std::int64_t n = nb * kQK_K;
            for (int source = 0; source < 2; ++source) {
                const auto w = source == 0 ? quantize(t, gaussian(n, static_cast<std::uint32_t>(rng()), 0.05f))
                                           : random_blocks(t, nb, rng);
                const auto aq = quantize(TensorType::Q8_K, gaussian(n, static_cast<std::uint32_t>(rng())));
                double ref = 0, mag = 0;
                float_reference(t, w.data(), reinterpret_cast<const BlockQ8K*>(aq.data()), n, &ref, &mag);
                const float got = scalar_dot(t)(n, w.data(), aq.data());
                INFO(ember::tensor_type_name(t) << " nb=" << nb << " source=" << source);
                REQUIRE(mag > 0);
                CHECK(std::fabs(double(got) - ref) <= kFloatRefRelTol * mag);
            }
        }
    }
}

TEST_CASE("K-quant dot products approximate the float dot product", "[kquants]") {
    // End to end: float weights and activations, quantized as the matmul path does.
    const std::int64_t n = 16 * kQK_K;
    const auto wf = gaussian(n, 17, 0.02f);
    const auto af = gaussian(n, 18, 1.0f);
    double ref = 0, mag = 0;
    for (std::size_t i = 0; i < wf.size(); ++i) {
        ref += double(wf[i]) * af[i];
        mag += std::fabs(double(wf[i]) * af[i]);
    }
    const auto aq = quantize(TensorType::Q8_K, af);
    const double tol[] = {0.02, 0.01, 0.006};  // of sum |w*a|, by type (Q4_K, Q5_K, Q6_K)
    int i = 0;
    for (TensorType t : kWeightTypes) {
        const auto w = quantize(t, wf);
        const float got = scalar_dot(t)(n, w.data(), aq.data());
        INFO(ember::tensor_type_name(t) << " got " << got << " want " << ref << " mag " << mag);
        CHECK(std::fabs(got - ref) <= tol[i++] * mag);
    }
}

TEST_CASE("K-quant tiles equal the dot products of their ISA", "[kquants][isa]") {
    // Bit for bit: a row's result must not depend on how many tokens share the tile (batch
    // invariance), so tiles and vec_dot must do the same arithmetic.
    std::mt19937 rng(77);
    struct Case {
        TensorType t;
        TileFn tile;
        VecDotFn dot;
        std::string_view isa;
    };
    std::vector<Case> all_cases;
    for (Isa isa : simd_isas()) {
        for (TensorType t : kWeightTypes) {
            const auto* k = type_kernels(t, isa);
            if (k->tile != nullptr) all_cases.push_back({t, k->tile, k->vec_dot, isa_name(isa)});
        }
    }
    if (all_cases.empty()) WARN("no SIMD K-quant tiles on this CPU: tile test skipped");
    for (const auto& c : all_cases) {
        INFO(std::string(c.isa));
        for (std::int64_t nb : {1, 3}) {
            const std::int64_t n = nb * kQK_K;
            const std::int64_t n_w = 5;
            const std::size_t w_row = block_bytes(c.t) * static_cast<std::size_t>(nb);
            const std::size_t w_stride = w_row + 3;  // rows need not be packed
            const std::size_t a_row = sizeof(BlockQ8K) * static_cast<std::size_t>(nb);
            const std::size_t a_stride = a_row + 64;
            std::vector<std::uint8_t> w(w_stride * n_w), a(a_stride * 9);
            for (std::int64_t r = 0; r < n_w; ++r) {
                const auto blocks = random_blocks(c.t, nb, rng);
                std::memcpy(w.data() + r * w_stride, blocks.data(), w_row);
            }
            for (int tk = 0; tk < 9; ++tk) {
                const auto q = quantize(TensorType::Q8_K, gaussian(n, static_cast<std::uint32_t>(rng())));
                std::memcpy(a.data() + tk * a_stride, q.data(), a_row);
            }
            for (std::int64_t n_a = 1; n_a <= 9; ++n_a) {
                const std::int64_t ldy = n_w + 2;
                std::vector<float> y(static_cast<std::size_t>(ldy * n_a), -1.0f);
                c.tile(n, w.data(), w_stride, n_w, a.data(), a_stride, n_a, y.data(), ldy);
                for (std::int64_t tk = 0; tk < n_a; ++tk) {
                    for (std::int64_t r = 0; r < n_w; ++r) {
                        INFO(ember::tensor_type_name(c.t) << " nb=" << nb << " n_a=" << n_a << " t=" << tk << " r=" << r);
                        CHECK(y[static_cast<std::size_t>(tk * ldy + r)] ==
                              c.dot(n, w.data() + r * w_stride, a.data() + tk * a_stride));
                    }
                    CHECK(y[static_cast<std::size_t>(tk * ldy + n_w)] == -1.0f);  // ldy padding untouched
                }
            }
        }
    }
}

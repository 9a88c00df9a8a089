// Every vec_dot / tile / matmul path on every ISA this CPU has, against the scalar twin and
// against float maths on the dequantized operands.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ember/error.hpp"
#include "kernel_test_util.hpp"
#include "kernels/matmul.hpp"
#include "kernels/quants.hpp"

using namespace ember;
using namespace ember::kernels;
using kernel_test::available_isas;
using kernel_test::random_floats;

namespace {

const TensorType kTypes[] = {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q8_0,
                             TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1};

std::size_t row_bytes(TensorType t, std::int64_t n) {
    const auto tr = tensor_type_traits(static_cast<std::uint32_t>(t));
    return static_cast<std::size_t>(n / tr->block_size * tr->block_bytes);
}

// Rows stored 4 bytes past the start of `storage`: unaligned for every SIMD load (16/32/64
// bytes), while keeping the natural alignment of the elements (fp16 scales, floats) that GGUF
// files guarantee.
constexpr std::size_t kMisalign = 4;
struct Rows {
    std::vector<std::uint8_t> storage;
    std::size_t stride = 0;
    const std::uint8_t* data() const { return storage.data() + kMisalign; }
};

Rows quantize_rows(TensorType t, const std::vector<float>& x, std::int64_t n_rows, std::int64_t n) {
    Rows r;
    r.stride = row_bytes(t, n);
    r.storage.assign(r.stride * static_cast<std::size_t>(n_rows) + kMisalign, 0);
    for (std::int64_t i = 0; i < n_rows; ++i) {
        quantize_row(t, x.data() + i * n, r.storage.data() + kMisalign + static_cast<std::size_t>(i) * r.stride, n);
    }
    return r;
}

Rows quantize_acts(const TypeKernels& k, const std::vector<float>& x, std::int64_t n_rows, std::int64_t n) {
    Rows r;
    r.stride = row_bytes(k.act_type, n);
    r.storage.assign(r.stride * static_cast<std::size_t>(n_rows) + kMisalign, 0);
    for (std::int64_t i = 0; i < n_rows; ++i) {
        k.quantize_act(x.data() + i * n, r.storage.data() + kMisalign + static_cast<std::size_t>(i) * r.stride, n);
    }
    return r;
}

// sum |w_i * a_i| over dequantized operands: the scale of rounding differences.
double abs_dot(const TypeKernels& k, const std::uint8_t* w, const std::uint8_t* a, std::int64_t n) {
    std::vector<float> wf(static_cast<std::size_t>(n)), af(static_cast<std::size_t>(n));
    k.dequantize(w, wf.data(), n);
    switch (k.act_type) {
        case TensorType::Q8_0: dequantize_q8_0(a, af.data(), n); break;
        case TensorType::Q8_1: dequantize_q8_1(a, af.data(), n); break;
        case TensorType::F16: dequantize_f16(a, af.data(), n); break;
        case TensorType::BF16: dequantize_bf16(a, af.data(), n); break;
        default: dequantize_f32(a, af.data(), n); break;
    }
    double s_abs = 0;
    for (std::int64_t i = 0; i < n; ++i) s_abs += std::fabs(static_cast<double>(wf[i]) * af[i]);
    return s_abs;
}

// What activation rounding can move sum_i w_i * x_i by, from the arithmetic of each format:
// F16 keeps 11 significant bits (relative error <= 2^-11 per element), BF16 8 (2^-8). Q8_0/Q8_1
// round x / d to an integer (error <= d/2, d = amax/127 per 32-block) and store d as fp16, which
// moves q * d by up to 127 * d * 2^-11; Q8_1's block sum s = d * sum(q) is fp16 too and meets
// the weights' min m (|m| <= max |w| of the block). Float accumulation adds ~1e-6 of sum |w x|.
double act_error_bound(TensorType act, const std::vector<float>& w, const float* x, std::int64_t n) {
    double bound = 0, abs_wx = 0;
    for (std::int64_t i = 0; i < n; ++i) abs_wx += std::fabs(static_cast<double>(w[i]) * x[i]);
    if (act == TensorType::F16) return std::ldexp(abs_wx, -11) + 1e-6 * abs_wx + 1e-6;
    if (act == TensorType::BF16) return std::ldexp(abs_wx, -8) + 1e-6 * abs_wx + 1e-6;
    if (act != TensorType::Q8_0 && act != TensorType::Q8_1) return 1e-6 * abs_wx + 1e-6;
    for (std::int64_t b = 0; b < n / 32; ++b) {
        double amax = 0, abs_w = 0, max_w = 0, sum_x = 0;
        for (std::int64_t i = 32 * b; i < 32 * b + 32; ++i) {
            amax = std::max(amax, std::fabs(static_cast<double>(x[i])));
            abs_w += std::fabs(static_cast<double>(w[i]));
            max_w = std::max(max_w, std::fabs(static_cast<double>(w[i])));
            sum_x += std::fabs(static_cast<double>(x[i]));
        }
        const double d = amax / 127;
        bound += abs_w * d * (0.5 + 127 * std::ldexp(1.0, -11));
        if (act == TensorType::Q8_1) bound += max_w * (sum_x + 16 * d) * std::ldexp(1.0, -10);
    }
    return bound + 1e-6 * abs_wx + 1e-6;
}

}  // namespace

TEST_CASE("scalar vec_dot equals float maths on the dequantized operands", "[vec_dot]") {
    for (TensorType t : kTypes) {
        INFO(tensor_type_name(t));
        const TypeKernels& k = *type_kernels(t, Isa::scalar);
        for (std::int64_t nb : {0, 1, 2, 5, 8}) {
            const std::int64_t n = nb * 32;
            const auto w = random_floats(static_cast<std::size_t>(n), 1 + static_cast<std::uint32_t>(nb));
            const auto x = random_floats(static_cast<std::size_t>(n), 100 + static_cast<std::uint32_t>(nb));
            const Rows wq = quantize_rows(t, w, 1, n);
            const Rows aq = quantize_acts(k, x, 1, n);
            std::vector<float> wf(static_cast<std::size_t>(n)), af(static_cast<std::size_t>(n));
            k.dequantize(wq.data(), wf.data(), n);
            double ref = 0;
            for (std::int64_t i = 0; i < n; ++i) ref += static_cast<double>(wf[i]) * x[i];
            const float got = k.vec_dot(n, wq.data(), aq.data());
            // Only the activation's rounding separates the two (weights are dequantized exactly).
            REQUIRE(std::fabs(got - ref) <= act_error_bound(k.act_type, wf, x.data(), n));
        }
    }
}

TEST_CASE("every ISA's vec_dot matches the scalar twin", "[vec_dot][isa]") {
    for (Isa isa : available_isas()) {
        for (TensorType t : kTypes) {
            INFO(std::string(isa_name(isa)) + " " + std::string(tensor_type_name(t)));
            const TypeKernels& k = *type_kernels(t, isa);
            const TypeKernels& ks = *type_kernels(t, Isa::scalar);
            REQUIRE(k.act_type == ks.act_type);
            const bool plain = t == TensorType::F32 || t == TensorType::F16 || t == TensorType::BF16;
            std::vector<std::int64_t> sizes{0, 32, 64, 96, 160, 256, 544};
            if (plain) sizes.insert(sizes.end(), {1, 7, 15, 17, 33, 100});
            for (std::int64_t n : sizes) {
                const auto w = random_floats(static_cast<std::size_t>(n), 7 + static_cast<std::uint32_t>(n));
                const auto x = random_floats(static_cast<std::size_t>(n), 9 + static_cast<std::uint32_t>(n), 3.0f);
                const Rows wq = quantize_rows(t, w, 1, n);
                const Rows aq = quantize_acts(k, x, 1, n);
                const Rows aqs = quantize_acts(ks, x, 1, n);
                REQUIRE(aq.storage == aqs.storage);  // identical activation bytes on every ISA
                const float got = k.vec_dot(n, wq.data(), aq.data());
                const float want = ks.vec_dot(n, wq.data(), aq.data());
                const double tol = kernel_test::kSimdRelTol * abs_dot(ks, wq.data(), aq.data(), n) + 1e-6;
                REQUIRE(std::fabs(static_cast<double>(got) - want) <= tol);
            }
        }
    }
}

TEST_CASE("matmul on every ISA, token count and thread count matches vec_dot", "[matmul][isa]") {
    const std::int64_t n_rows = 13;
    for (TensorType t : kTypes) {
        for (std::int64_t n : {32, 96, 256}) {
            const auto wf = random_floats(static_cast<std::size_t>(n_rows * n), 21);
            const Rows wq = quantize_rows(t, wf, n_rows, n);
            const auto info = gguf::TensorInfo::matrix("test.weight", t, n, n_rows, wq.data(),
                                                       wq.stride * static_cast<std::size_t>(n_rows));
            const WeightMatrix w = WeightMatrix::prepare(info);
            REQUIRE(w.row_bytes() == wq.stride);
            const TypeKernels& ks = *type_kernels(t, Isa::scalar);
            for (std::int64_t n_tokens : {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17}) {
                const auto x = random_floats(static_cast<std::size_t>(n_tokens * n), 31 + static_cast<std::uint32_t>(n_tokens));
                const Rows aq = quantize_acts(ks, x, n_tokens, n);
                std::vector<std::byte> scratch(matmul_scratch_bytes(w, n_tokens));
                const std::int64_t ldy = n_rows + 3;
                std::vector<float> want(static_cast<std::size_t>(n_tokens * n_rows));
                std::vector<double> tol(want.size());
                for (std::int64_t tk = 0; tk < n_tokens; ++tk) {
                    for (std::int64_t r = 0; r < n_rows; ++r) {
                        const auto* wr = wq.data() + static_cast<std::size_t>(r) * wq.stride;
                        const auto* ar = aq.data() + static_cast<std::size_t>(tk) * aq.stride;
                        want[static_cast<std::size_t>(tk * n_rows + r)] = ks.vec_dot(n, wr, ar);
                        tol[static_cast<std::size_t>(tk * n_rows + r)] =
                            kernel_test::kSimdRelTol * abs_dot(ks, wr, ar, n) + 1e-6;
                    }
                }
                const auto isas = kernel_test::isas_with_own(t, [](const TypeKernels& a, const TypeKernels& b) {
                    return a.vec_dot == b.vec_dot && a.tile == b.tile && a.quantize_act == b.quantize_act;
                });
                for (Isa isa : isas) {
                    for (int threads : {1, 3}) {
                        INFO(std::string(isa_name(isa)) + " " + std::string(tensor_type_name(t)) + " n=" +
                             std::to_string(n) + " tokens=" + std::to_string(n_tokens) + " threads=" +
                             std::to_string(threads));
                        std::vector<float> y(static_cast<std::size_t>(n_tokens * ldy), -7.0f);
                        matmul(w, x.data(), n_tokens, y.data(), ldy, scratch, threads, isa);
                        for (std::int64_t tk = 0; tk < n_tokens; ++tk) {
                            for (std::int64_t r = 0; r < ldy; ++r) {
                                const float got = y[static_cast<std::size_t>(tk * ldy + r)];
                                if (r >= n_rows) {
                                    REQUIRE(got == -7.0f);  // padding untouched
                                    continue;
                                }
                                const auto i = static_cast<std::size_t>(tk * n_rows + r);
                                REQUIRE(std::fabs(static_cast<double>(got) - want[i]) <= tol[i]);
                            }
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("matmul with a large prefill block uses every row and token", "[matmul]") {
    // 70 tokens crosses the 64-token block; 37 rows crosses row groups; compare with dequantized maths.
    const std::int64_t n_rows = 37, n = 128, n_tokens = 70;
    const auto wf = random_floats(static_cast<std::size_t>(n_rows * n), 3);
    const auto x = random_floats(static_cast<std::size_t>(n_tokens * n), 4);
    const Rows wq = quantize_rows(TensorType::Q4_0, wf, n_rows, n);
    const auto info = gguf::TensorInfo::matrix("big", TensorType::Q4_0, n, n_rows, wq.data(),
                                               wq.stride * static_cast<std::size_t>(n_rows));
    const WeightMatrix w = WeightMatrix::prepare(info);
    std::vector<std::byte> scratch(matmul_scratch_bytes(w, n_tokens));
    std::vector<float> deq(static_cast<std::size_t>(n));
    for (Isa isa : available_isas()) {
        std::vector<float> y(static_cast<std::size_t>(n_tokens * n_rows));
        matmul(w, x.data(), n_tokens, y.data(), n_rows, scratch, 2, isa);
        for (std::int64_t r = 0; r < n_rows; ++r) {
            dequantize_row(info, r, deq.data());
            for (std::int64_t tk = 0; tk < n_tokens; ++tk) {
                double ref = 0;
                for (std::int64_t c = 0; c < n; ++c) ref += static_cast<double>(deq[c]) * x[tk * n + c];
                REQUIRE(std::fabs(y[tk * n_rows + r] - ref) <= act_error_bound(TensorType::Q8_0, deq, x.data() + tk * n, n));
            }
        }
    }
}

TEST_CASE("prepare and dequantize_row reject bad tensors with the tensor's name", "[matmul]") {
    std::vector<std::uint8_t> bytes(1024);
    gguf::TensorInfo info;
    info.name = "blk.0.attn_q.weight";
    info.type = TensorType::Q4_0;
    info.n_dims = 2;
    info.ne[0] = 48;  // not a multiple of 32
    info.ne[1] = 2;
    info.data = bytes.data();
    CHECK_THROWS_WITH(WeightMatrix::prepare(info), Catch::Contains("blk.0.attn_q.weight"));
    info.ne[0] = 32;
    info.type = TensorType::IQ2_XXS;
    CHECK_THROWS_WITH(WeightMatrix::prepare(info), Catch::Contains("not supported"));
    info.type = TensorType::Q4_0;
    float out[32];
    CHECK_THROWS_AS(dequantize_row(info, 5, out), ember::Error);
    info.n_bytes = 10;  // too small for 2 rows
    CHECK_THROWS_AS(WeightMatrix::prepare(info), ember::Error);
}

TEST_CASE("float tiles equal vec_dot bit for bit at every tile shape and row tail", "[matmul][tile]") {
    // Every (weight row, activation row) result of a float tile is the same accumulator chain as
    // vec_dot, whatever the tile shape: decode (1-2 tokens), full tiles and their edges, rows
    // not a multiple of the vector width (zero-padded tails).
    for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16}) {
        const auto isas = kernel_test::isas_with_own(t, [](const TypeKernels& a, const TypeKernels& b) {
            return a.vec_dot == b.vec_dot && a.tile == b.tile;
        });
        for (Isa isa : isas) {
            const TypeKernels& k = *type_kernels(t, isa);
            if (k.tile == nullptr) continue;  // scalar: matmul loops over vec_dot
            for (std::int64_t n : {1, 7, 100, 161}) {
                const std::int64_t n_w = 11, n_a = 15;
                const Rows w = quantize_rows(t, random_floats(static_cast<std::size_t>(n_w * n), 41), n_w, n);
                const Rows a = quantize_acts(k, random_floats(static_cast<std::size_t>(n_a * n), 42, 2.0f), n_a, n);
                for (std::int64_t rows : {1, 5, 8, 11}) {
                    for (std::int64_t toks : {1, 2, 3, 7, 15}) {
                        INFO(std::string(isa_name(isa)) + " " + std::string(tensor_type_name(t)) + " n=" + std::to_string(n) +
                             " rows=" + std::to_string(rows) + " tokens=" + std::to_string(toks));
                        std::vector<float> y(static_cast<std::size_t>(toks * rows));
                        k.tile(n, w.data(), w.stride, rows, a.data(), a.stride, toks, y.data(), rows);
                        for (std::int64_t tk = 0; tk < toks; ++tk) {
                            for (std::int64_t r = 0; r < rows; ++r) {
                                const float want = k.vec_dot(n, w.data() + static_cast<std::size_t>(r) * w.stride,
                                                             a.data() + static_cast<std::size_t>(tk) * a.stride);
                                const float got = y[static_cast<std::size_t>(tk * rows + r)];
                                REQUIRE(std::memcmp(&got, &want, sizeof got) == 0);
                            }
                        }
                    }
                }
            }
        }
    }
}

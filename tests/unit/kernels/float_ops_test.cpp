#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/float_ops.hpp"

using namespace ember::kernels;
using kernel_test::random_floats;

TEST_CASE("rmsnorm normalizes and scales", "[float_ops]") {
    const auto x = random_floats(288, 1, 3.0f);
    const auto w = random_floats(288, 2);
    std::vector<float> out(288);
    rmsnorm(out.data(), x.data(), w.data(), 288, 1e-5f);
    double ss = 0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double scale = 1.0 / std::sqrt(ss / 288 + 1e-5);
    for (int i = 0; i < 288; ++i) REQUIRE(out[i] == Approx(x[i] * scale * w[i]).epsilon(1e-5).margin(1e-6));
    // In place.
    std::vector<float> y = x;
    rmsnorm(y.data(), y.data(), w.data(), 288, 1e-5f);
    CHECK(y == out);
}

TEST_CASE("rope rotates adjacent pairs by pos * base^(-2i/n_rot) and leaves the rest", "[float_ops]") {
    const std::int64_t n_heads = 3, head_dim = 16, n_rot = 12, pos = 7;
    const float base = 10000.0f;
    const auto x = random_floats(static_cast<std::size_t>(n_heads * head_dim), 3);
    std::vector<float> y = x;
    rope(y.data(), n_heads, head_dim, n_rot, pos, base);
    for (std::int64_t h = 0; h < n_heads; ++h) {
        for (std::int64_t i = 0; i < head_dim / 2; ++i) {
            const float x0 = x[h * head_dim + 2 * i], x1 = x[h * head_dim + 2 * i + 1];
            const float y0 = y[h * head_dim + 2 * i], y1 = y[h * head_dim + 2 * i + 1];
            if (2 * i >= n_rot) {
                REQUIRE(y0 == x0);
                REQUIRE(y1 == x1);
                continue;
            }
            const double theta = pos * std::pow(static_cast<double>(base), -2.0 * i / n_rot);
            REQUIRE(y0 == Approx(x0 * std::cos(theta) - x1 * std::sin(theta)).margin(1e-5));
            REQUIRE(y1 == Approx(x0 * std::sin(theta) + x1 * std::cos(theta)).margin(1e-5));
        }
    }
    // pos 0 is the identity.
    std::vector<float> z = x;
    rope(z.data(), n_heads, head_dim, n_rot, 0, base);
    CHECK(z == x);
}

TEST_CASE("softmax sums to one and survives large inputs", "[float_ops]") {
    std::vector<float> x{1000.0f, 999.0f, -5.0f, 1000.0f};
    softmax(x.data(), 4);
    double s = 0;
    for (float v : x) s += v;
    CHECK(s == Approx(1.0).epsilon(1e-6));
    CHECK(x[0] == x[3]);
    CHECK(x[0] == Approx(1.0 / (2 + std::exp(-1.0) + std::exp(-1005.0))).epsilon(1e-6));
    softmax(x.data(), 0);  // no-op
}

TEST_CASE("float kernels of every ISA match scalar", "[float_ops][isa]") {
    const FloatKernels& s = float_kernels(Isa::scalar);
    for (Isa isa : kernel_test::available_isas()) {
        const FloatKernels& k = float_kernels(isa);
        for (std::int64_t n : {0, 1, 7, 8, 15, 16, 17, 31, 64, 100, 288}) {
            INFO(std::string(isa_name(isa)) + " n=" + std::to_string(n));
            auto a = random_floats(static_cast<std::size_t>(n) + 1, 5);
            auto b = random_floats(static_cast<std::size_t>(n) + 1, 6);
            double abs_sum = 0;
            for (std::int64_t i = 0; i < n; ++i) abs_sum += std::fabs(static_cast<double>(a[i + 1]) * b[i + 1]);
            REQUIRE(std::fabs(k.dot(a.data() + 1, b.data() + 1, n) - s.dot(a.data() + 1, b.data() + 1, n)) <=
                    kernel_test::kSimdRelTol * abs_sum + 1e-7);
            std::vector<float> y1 = a, y2 = a;
            k.axpy(y1.data() + 1, 0.37f, b.data() + 1, n);
            s.axpy(y2.data() + 1, 0.37f, b.data() + 1, n);
            for (std::size_t i = 0; i < y1.size(); ++i) REQUIRE(y1[i] == Approx(y2[i]).margin(1e-6));
            std::vector<float> g1(static_cast<std::size_t>(n)), g2(static_cast<std::size_t>(n));
            k.swiglu(g1.data(), a.data(), b.data(), n);
            s.swiglu(g2.data(), a.data(), b.data(), n);
            for (std::size_t i = 0; i < g1.size(); ++i) REQUIRE(g1[i] == Approx(g2[i]).epsilon(1e-6));
        }
    }
    // silu(x) * up with x/(1+exp(-x)).
    const float g = 1.5f, u = 2.0f;
    float out;
    swiglu(&out, &g, &u, 1);
    CHECK(out == Approx(1.5 / (1 + std::exp(-1.5)) * 2.0).epsilon(1e-6));
}

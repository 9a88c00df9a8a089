// The float kernels gemma models add: GeGLU with ggml's fp16 GELU semantics, and attention with
// soft-capped scores, against double-precision evaluations of their formulas.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/float_ops.hpp"
#include "kernels/fp16.hpp"

namespace {

double gelu_tanh_double(double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

float fp16_round(float x) {
    return ember::kernels::fp16_to_fp32(ember::kernels::fp32_to_fp16(x));
}

}  // namespace

TEST_CASE("geglu_f16: GELU of the fp16-rounded input, rounded to fp16, times up", "[kernels][geglu]") {
    std::vector<float> x, up;
    for (float v = -12.0f; v <= 12.0f; v += 0.0137f) {
        x.push_back(v);
        up.push_back(1.0f);
    }
    for (const float v : {-10.0f, 10.0f, 0.0f, -0.0f, 1e-6f, -1e-6f, 9.999f, -9.999f}) {
        x.push_back(v);
        up.push_back(1.0f);
    }
    std::vector<float> out(x.size());
    ember::kernels::geglu_f16(out.data(), x.data(), up.data(), static_cast<std::int64_t>(x.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
        CAPTURE(x[i], out[i]);
        if (x[i] <= -10.0f) {
            CHECK(out[i] == 0.0f);
        } else if (x[i] >= 10.0f) {
            CHECK(out[i] == x[i]);
        } else {
            // ggml's table: the float formula at the fp16 input, rounded to fp16.
            const float xh = fp16_round(x[i]);
            const float g = 0.5f * xh * (1.0f + std::tanh(0.79788456080286535587989211986876f * xh * (1.0f + 0.044715f * xh * xh)));
            CHECK(out[i] == fp16_round(g));
        }
        // And the whole is GELU up to fp16 precision (float cancels to 0 in the far left tail).
        const double exact = gelu_tanh_double(x[i]);
        CHECK(std::abs(out[i] - exact) <= 2e-3 * std::abs(exact) + 1e-5);
    }

    // The up factor multiplies, and out may alias gate.
    std::vector<float> g = {0.5f, -1.25f, 3.0f}, u = {2.0f, -3.0f, 0.5f}, ref(3);
    ember::kernels::geglu_f16(ref.data(), g.data(), std::vector<float>(3, 1.0f).data(), 3);
    ember::kernels::geglu_f16(g.data(), g.data(), u.data(), 3);
    for (int i = 0; i < 3; ++i) CHECK(g[static_cast<std::size_t>(i)] == ref[static_cast<std::size_t>(i)] * u[static_cast<std::size_t>(i)]);
}

TEST_CASE("attention with soft-capped scores equals its formula", "[kernels][softcap]") {
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.0f, 3.0f);
    const std::int64_t hd = 8, n_q = 2, n_pos = 23, stride = 24;
    std::vector<float> q(static_cast<std::size_t>(n_q * hd)), k(static_cast<std::size_t>(n_pos * stride)),
        v(k.size()), out(q.size()), scores(static_cast<std::size_t>(ember::kernels::attend_scratch_floats(n_q, n_pos, hd)));
    for (auto* vec : {&q, &k, &v}) {
        for (float& x : *vec) x = nd(rng);
    }
    for (const float cap : {50.0f, 2.0f}) {
        const float scale = 0.35f;
        // One run of F32 keys as a grid [dim][position] and values as rows (one slab: hd < 32)
        // (the scalar kernel: the one the decoder takes for soft-capped models on every ISA).
        std::vector<float> grid(static_cast<std::size_t>(hd * n_pos)), rows(grid.size());
        for (std::int64_t t = 0; t < n_pos; ++t) {
            for (std::int64_t i = 0; i < hd; ++i) {
                grid[static_cast<std::size_t>(i * n_pos + t)] = k[static_cast<std::size_t>(t * stride + i)];
                rows[static_cast<std::size_t>(t * hd + i)] = v[static_cast<std::size_t>(t * stride + i)];
            }
        }
        const ember::kernels::KvRun run{reinterpret_cast<const std::uint8_t*>(grid.data()),
                                        reinterpret_cast<const std::uint8_t*>(rows.data()), n_pos, 0, n_pos};
        ember::kernels::attend_row(ember::kernels::float_kernels(ember::kernels::Isa::scalar).attend(ember::KvType::f32),
                                   q.data(), n_q, hd, &run, 1, n_pos, scale, cap, out.data(), scores.data());
        for (std::int64_t j = 0; j < n_q; ++j) {
            std::vector<double> s(static_cast<std::size_t>(n_pos));
            double max = -1e300, sum = 0;
            for (std::int64_t t = 0; t < n_pos; ++t) {
                double d = 0;
                for (std::int64_t i = 0; i < hd; ++i) d += double(q[static_cast<std::size_t>(j * hd + i)]) * k[static_cast<std::size_t>(t * stride + i)];
                s[static_cast<std::size_t>(t)] = cap * std::tanh(d * scale / cap);
                CHECK(std::abs(s[static_cast<std::size_t>(t)]) <= cap);
                max = std::max(max, s[static_cast<std::size_t>(t)]);
            }
            for (double& x : s) sum += (x = std::exp(x - max));
            for (std::int64_t i = 0; i < hd; ++i) {
                double o = 0;
                for (std::int64_t t = 0; t < n_pos; ++t) o += s[static_cast<std::size_t>(t)] / sum * v[static_cast<std::size_t>(t * stride + i)];
                CHECK(out[static_cast<std::size_t>(j * hd + i)] == Approx(o).margin(1e-4));
            }
        }
    }
}

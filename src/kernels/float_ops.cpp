// Float ops with llama.cpp's arithmetic (ggml-cpu ops.cpp / vec.h), so greedy decoding agrees:
// RMSNorm and softmax sum in double (ggml_float), RoPE advances theta by an iterative float
// product. dot/axpy/swiglu go through the per-ISA table.
#include "kernels/float_ops.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/dispatch.hpp"

namespace ember::kernels {

void rmsnorm(float* out, const float* x, const float* weight, std::int64_t n, float eps) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (std::int64_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * weight[i];  // ggml: scale, then mul
}

void rope(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,
          std::int64_t pos, float freq_base) {
    const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(n_rot));
    // cos/sin per pair for this position (at most head_dim/2 pairs; small stack buffer).
    constexpr std::int64_t kMaxPairs = 512;
    float cs[2 * kMaxPairs];
    const std::int64_t n_pairs = std::min(n_rot, head_dim) / 2;
    std::vector<float> heap;
    float* c = cs;
    if (n_pairs > kMaxPairs) {
        heap.resize(static_cast<std::size_t>(2 * n_pairs));
        c = heap.data();
    }
    float theta = static_cast<float>(pos);
    for (std::int64_t i = 0; i < n_pairs; ++i) {
        c[2 * i] = std::cos(theta);
        c[2 * i + 1] = std::sin(theta);
        theta *= theta_scale;
    }
    for (std::int64_t h = 0; h < n_heads; ++h) {
        float* v = x + h * head_dim;
        for (std::int64_t i = 0; i < n_pairs; ++i) {
            const float x0 = v[2 * i], x1 = v[2 * i + 1];
            const float cos_t = c[2 * i], sin_t = c[2 * i + 1];
            v[2 * i] = x0 * cos_t - x1 * sin_t;
            v[2 * i + 1] = x0 * sin_t + x1 * cos_t;
        }
    }
}

void softmax(float* x, std::int64_t n) {
    if (n <= 0) return;
    float max = -INFINITY;
    for (std::int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        const float e = std::exp(x[i] - max);
        x[i] = e;
        sum += static_cast<double>(e);
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (std::int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void swiglu(float* out, const float* gate, const float* up, std::int64_t n) {
    float_kernels().swiglu(out, gate, up, n);
}

float dot(const float* a, const float* b, std::int64_t n) { return float_kernels().dot(a, b, n); }

void axpy(float* y, float a, const float* x, std::int64_t n) { float_kernels().axpy(y, a, x, n); }

}  // namespace ember::kernels

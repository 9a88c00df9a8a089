#include "model/rope.hpp"

#include <cmath>

namespace ember::model {

void rope_angles(float* cs, std::int64_t pos, std::int64_t n_rot, float freq_base,
                 const std::vector<float>& freq_factors) {
    const float theta_scale = std::pow(freq_base, -2.0f / static_cast<float>(n_rot));
    float theta = static_cast<float>(pos);
    for (std::int64_t i = 0; i < n_rot / 2; ++i) {
        const float t = freq_factors.empty() ? theta : theta / freq_factors[static_cast<std::size_t>(i)];
        cs[2 * i] = std::cos(t);
        cs[2 * i + 1] = std::sin(t);
        theta *= theta_scale;
    }
}

void rope_apply(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,
                const float* cs) {
    for (std::int64_t h = 0; h < n_heads; ++h) {
        float* v = x + h * head_dim;
        for (std::int64_t i = 0; i < n_rot / 2; ++i) {
            const float c = cs[2 * i], s = cs[2 * i + 1];
            const float x0 = v[2 * i], x1 = v[2 * i + 1];
            v[2 * i] = x0 * c - x1 * s;
            v[2 * i + 1] = x0 * s + x1 * c;
        }
    }
}

}  // namespace ember::model

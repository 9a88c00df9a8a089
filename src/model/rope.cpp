#include "model/rope.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "kernels/float_ops.hpp"

namespace ember::model {
namespace {

// The dimension (0..n_rot) whose rotation count over n_ctx_orig positions equals n_turns.
float corr_dim(const RopeParams& p, float n_turns) {
    const float two_pi = 2.0f * std::numbers::pi_v<float>;
    return static_cast<float>(p.n_rot) *
           std::log(static_cast<float>(p.n_ctx_orig) / (n_turns * two_pi)) /
           (2.0f * std::log(p.freq_base));
}

}  // namespace

void rope_yarn_corr_dims(const RopeParams& p, float dims[2]) {
    const float low = std::floor(corr_dim(p, p.beta_fast));
    const float high = std::ceil(corr_dim(p, p.beta_slow));
    dims[0] = std::max(0.0f, low);
    dims[1] = std::min(static_cast<float>(p.n_rot - 1), high);
}

void rope_angles(float* cs, std::int64_t pos, const RopeParams& p, std::span<const float> factors,
                 bool rotation_only) {
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    float dims[2] = {0.0f, 0.0f};
    if (p.ext_factor != 0.0f) rope_yarn_corr_dims(p, dims);
    const float mscale = rotation_only ? 1.0f : p.mscale;
    float theta = static_cast<float>(pos);
    for (std::int64_t i = 0; i < p.n_rot / 2; ++i) {
        const float extrap = factors.empty() ? theta : theta / factors[static_cast<std::size_t>(i)];
        float t = p.freq_scale * extrap;
        if (p.ext_factor != 0.0f) {
            // 1 below dims[0] (keep the extrapolated angle), 0 above dims[1] (interpolate).
            const float y = (static_cast<float>(i) - dims[0]) / std::max(0.001f, dims[1] - dims[0]);
            const float ramp = (1.0f - std::min(1.0f, std::max(0.0f, y))) * p.ext_factor;
            t = t * (1.0f - ramp) + extrap * ramp;
        }
        cs[2 * i] = std::cos(t) * mscale;
        cs[2 * i + 1] = std::sin(t) * mscale;
        theta *= theta_scale;
    }
}

void rope_apply(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,
                RopeStyle style, const float* cs) {
    // Pair i is (x[2i], x[2i+1]) in normal style and (x[i], x[i + n_rot/2]) in NEOX style.
    kernels::rope(x, n_heads, head_dim, n_rot, cs, style == RopeStyle::neox);
}

}  // namespace ember::model

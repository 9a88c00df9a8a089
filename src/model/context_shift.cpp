#include "model/context_shift.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/fail.hpp"

namespace ember::model {

std::int64_t context_shift_discard(std::int64_t n_past, std::int64_t n_keep) noexcept {
    if (n_past <= n_keep) return 0;
    return std::max<std::int64_t>((n_past - n_keep) / 2, 1);
}

// Must stay identical to fill_rope_row in llama_forward.cpp.
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

void shift_context(KvCache& cache, const LlamaConfig& config, const std::vector<float>& freq_factors,
                   std::int64_t n_past, std::int64_t n_keep, std::int64_t n_discard,
                   std::span<float> rope_scratch) {
    EMBER_ASSERT(n_keep >= 0 && n_discard > 0 && n_keep + n_discard <= n_past &&
                 n_past <= cache.n_ctx());
    EMBER_ASSERT(static_cast<std::int64_t>(rope_scratch.size()) >= config.n_rot);
    const std::int64_t n_move = n_past - n_keep - n_discard;
    cache.move_down(n_keep + n_discard, n_keep, n_move);
    float* cs = rope_scratch.data();
    rope_angles(cs, -n_discard, config.n_rot, config.rope_freq_base, freq_factors);
    for (std::int64_t il = 0; il < cache.n_layer(); ++il) {
        for (std::int64_t p = n_keep; p < n_keep + n_move; ++p) {
            rope_apply(cache.k(il, p), config.n_head_kv, config.head_dim, config.n_rot, cs);
        }
    }
}

}  // namespace ember::model

#include "model/context_shift.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/fail.hpp"

namespace ember::model {

std::int64_t context_shift_discard(std::int64_t n_past, std::int64_t n_keep) noexcept {
    if (n_past <= n_keep) return 0;
    return std::max<std::int64_t>((n_past - n_keep) / 2, 1);
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

#include "model/context_shift.hpp"

#include <algorithm>

#include "runtime/fail.hpp"

namespace ember::model {

std::int64_t context_shift_discard(std::int64_t n_past, std::int64_t n_keep) noexcept {
    if (n_past <= n_keep) return 0;
    return std::max<std::int64_t>((n_past - n_keep) / 2, 1);
}

void shift_context(KvCache& cache, const ModelConfig& config, std::span<const float> freq_factors,
                   std::int64_t n_past, std::int64_t n_keep, std::int64_t n_discard,
                   std::span<float> rope_scratch) {
    EMBER_ASSERT(n_keep >= 0 && n_discard > 0 && n_keep + n_discard <= n_past &&
                 n_past <= cache.n_ctx() && n_past == cache.size());
    const std::int64_t n_rot = config.n_rot(), n_kv = config.n_embd_kv();
    EMBER_ASSERT(static_cast<std::int64_t>(rope_scratch.size()) >= 2 * n_rot + n_kv);
    const std::int64_t n_move = n_past - n_keep - n_discard;
    const bool moved = cache.move_down(n_keep + n_discard, n_keep, n_move);
    EMBER_ASSERT(moved);  // a session's pool has room for its copies
    float* cs_global = rope_scratch.data();
    float* cs_local = rope_scratch.data() + n_rot;
    float* row = rope_scratch.data() + 2 * n_rot;
    rope_angles(cs_global, -n_discard, config.rope, freq_factors, /*rotation_only=*/true);
    rope_angles(cs_local, -n_discard, config.rope_local, freq_factors, /*rotation_only=*/true);
    for (std::int64_t il = 0; il < cache.n_layer(); ++il) {
        const float* cs = config.is_local(il) ? cs_local : cs_global;
        for (std::int64_t p = n_keep; p < n_keep + n_move; ++p) {
            if (!cache.holds(il, p)) continue;  // dropped by a sliding layer
            cache.load_keys(il, p, row);
            rope_apply(row, config.n_head_kv, config.head_dim, n_rot, config.rope.style, cs);
            cache.store_keys(il, p, row);  // values stay as they are
        }
    }
}

}  // namespace ember::model

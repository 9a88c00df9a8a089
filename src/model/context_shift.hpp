// Context shifting (llama.cpp's "context shift"): when a sequence fills its KV cache, keep the
// first n_keep positions, drop the n_discard after them, move the rest down, and re-rotate the
// moved keys by -n_discard positions so they read as if computed at their new positions.
#pragma once

#include <cstdint>
#include <span>

#include "model/config.hpp"
#include "model/kv_cache.hpp"
#include "model/rope.hpp"

namespace ember::model {

/// How many positions llama.cpp discards from a full sequence of n_past positions that keeps
/// n_keep: half of the rest, (n_past - n_keep) / 2, but at least 1 (0 when nothing can go).
std::int64_t context_shift_discard(std::int64_t n_past, std::int64_t n_keep) noexcept;

/// Shifts the cache of a sequence holding n_past positions: positions [n_keep + n_discard,
/// n_past) move to [n_keep, n_past - n_discard) and their keys are rotated by -n_discard with
/// each layer's RoPE (its style, base and scaling; a pure rotation: the keys keep their
/// magnitude). `freq_factors` are the sequence's RoPE factors (ModelWeights::rope_factors);
/// `rope_scratch` holds at least 2 * config.n_rot() + config.n_embd_kv() floats (angles, and a
/// key row widened to float when the cache stores F16 or Q8_0). Allocates nothing. Keys stored
/// as F16 or Q8_0 are rotated in float and stored again (rounded once more).
/// Requires 0 <= n_keep, 0 < n_discard, n_keep + n_discard <= n_past <= cache.n_ctx(), and
/// n_keep == cache.n_pinned() when sliding layers dropped rows.
void shift_context(KvCache& cache, const ModelConfig& config, std::span<const float> freq_factors,
                   std::int64_t n_past, std::int64_t n_keep, std::int64_t n_discard,
                   std::span<float> rope_scratch);

}  // namespace ember::model

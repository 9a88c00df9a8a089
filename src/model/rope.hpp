// RoPE as GGUF llama files expect it ("normal" mode: adjacent pairs), shared by the forward pass
// and the context shift so both rotate keys with exactly the same angles.
#pragma once

#include <cstdint>
#include <vector>

namespace ember::model {

/// cos/sin of the n_rot / 2 RoPE angles for position (or position delta) `pos`, into cs[n_rot],
/// computed exactly as the forward pass computes them (llama.cpp's rope cache): theta_scale =
/// freq_base^(-2/n_rot) in float, the angle starts at `pos` and is multiplied by theta_scale
/// from pair to pair, and divided by the pair's frequency factor when there are any.
void rope_angles(float* cs, std::int64_t pos, std::int64_t n_rot, float freq_base,
                 const std::vector<float>& freq_factors);

/// Rotates adjacent pairs of the first n_rot values of each of the n_heads heads (head_dim
/// apart) by the angles in cs. RoPE angles add, so rotating a key made at position p by the
/// angles of -d gives (up to rounding) the key at position p - d.
void rope_apply(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,
                const float* cs);

}  // namespace ember::model

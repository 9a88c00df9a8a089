// RoPE as GGUF files expect it, shared by the forward pass and the context shift so both rotate
// keys with exactly the same angles. Follows ggml's rope (ggml-cpu ops.cpp, rope_yarn and the
// rope cache), so that angles agree with llama.cpp's to the last bit where the arithmetic allows:
//
//   theta_i  = pos * freq_base^(-2i/n_rot) / factor_i      (iterative float product, as ggml)
//   linear:  theta_i *= freq_scale                          (freq_scale = 1 / rope.scaling.factor)
//   YaRN:    theta_i  = mix(freq_scale * theta_i, theta_i, ramp_i)   ramp_i = 1 for pairs below
//            the "fast" correction dimension, 0 above the "slow" one, linear between
//   cos/sin  scaled by `mscale` (rope.scaling.attn_factor, times YaRN's 1 + 0.1 ln(factor))
//
// factor_i are Llama 3's rope_freqs or Phi-3's LongRoPE long/short factors (empty: 1).
#pragma once

#include <cstdint>
#include <span>

#include "model/arch.hpp"

namespace ember::model {

struct RopeParams {
    RopeStyle style = RopeStyle::normal;
    std::int64_t n_rot = 0;       ///< Rotated values per head (even, at most the head size).
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;      ///< 1 / rope.scaling.factor for linear and YaRN scaling.
    float ext_factor = 0.0f;      ///< YaRN extrapolation mix: 1 with YaRN, else 0.
    float mscale = 1.0f;          ///< Magnitude of cos/sin (attention factor).
    float beta_fast = 32.0f;      ///< YaRN: rotations per context at the fast correction dim.
    float beta_slow = 1.0f;       ///< YaRN: same at the slow one.
    std::int64_t n_ctx_orig = 0;  ///< YaRN: the context the model was trained with.
};

/// YaRN's correction dimensions [low, high] (pair indices 2i compared against them as in ggml):
/// the dims whose wavelength fits beta_fast (low) / beta_slow (high) times in n_ctx_orig.
void rope_yarn_corr_dims(const RopeParams& p, float dims[2]);

/// cos/sin of the n_rot / 2 angles for position (or position delta) `pos`, into cs[n_rot]:
/// cs[2i] = cos, cs[2i+1] = sin of pair i. `factors` has n_rot / 2 divisors or is empty.
/// With `rotation_only` the magnitude is 1 (a context shift rotates keys that already carry
/// the magnitude).
void rope_angles(float* cs, std::int64_t pos, const RopeParams& p, std::span<const float> factors,
                 bool rotation_only = false);

/// Rotates the first n_rot values of each of the n_heads heads (head_dim apart) by the angles
/// in cs, pairing values as `style` says; values past n_rot are untouched. RoPE angles add, so
/// rotating a key made at position p by the angles of -d gives (up to rounding) the key at p - d.
void rope_apply(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,
                RopeStyle style, const float* cs);

}  // namespace ember::model

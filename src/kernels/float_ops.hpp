// Float kernels of the forward pass, dispatched to the active ISA's xsimd version
// (isa/float_kernels-inl.hpp; scalar twins in isa/float_scalar.cpp). Arithmetic follows
// llama.cpp's where greedy parity depends on it (RMSNorm sums x*x in double).
#pragma once

#include <cstdint>

namespace ember::kernels {

/// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]. `out` may alias `x`.
void rmsnorm(float* out, const float* x, const float* weight, std::int64_t n, float eps);

/// out[i] = silu(gate[i]) * up[i] (SwiGLU). `out` may alias `gate`.
void swiglu(float* out, const float* gate, const float* up, std::int64_t n);

/// out[i] = gelu(gate[i]) * up[i] with GELU's tanh form (GEGLU, Gemma). `out` may alias `gate`.
void geglu(float* out, const float* gate, const float* up, std::int64_t n);

/// GeGLU as llama.cpp's CPU backend evaluates it (gelu_f16.cpp): GELU through ggml's fp16 table,
/// i.e. the input rounded to fp16, GELU (tanh form, float) of that, rounded to fp16; 0 for
/// x <= -10 and x for x >= 10; times up. The decoder uses it for Gemma so that greedy text
/// agrees with llama.cpp's. A table lookup per value, the same on every ISA. `out` may alias
/// `gate`.
void geglu_f16(float* out, const float* gate, const float* up, std::int64_t n);

/// y[i] += x[i] (residual connections).
void add(float* y, const float* x, std::int64_t n);

/// Rotates the first n_rot values of each of n_heads heads (head_dim apart) by the angles in cs
/// ((cos, sin) of pair i at cs[2i], cs[2i+1]). Pairs are adjacent (x[2i], x[2i+1]) in the
/// normal layout (llama), or (x[i], x[i + n_rot/2]) in the NEOX layout (Qwen, Phi, Gemma).
void rope(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot, const float* cs,
          bool neox);

}  // namespace ember::kernels

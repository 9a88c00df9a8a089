// Float kernels of the forward pass (vectorized with xsimd, dispatched per ISA).
#pragma once

#include <cstdint>

namespace ember::kernels {

/// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i]. `out` may alias `x`.
void rmsnorm(float* out, const float* x, const float* weight, std::int64_t n, float eps);

/// Rotates adjacent pairs (x[2i], x[2i+1]) of the first n_rot values of each of n_heads heads
/// (head_dim apart) by pos * freq_base^(-2i / n_rot), as GGUF llama files expect ("normal" RoPE).
void rope(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,
          std::int64_t pos, float freq_base);

/// In-place softmax of n values.
void softmax(float* x, std::int64_t n);

/// out[i] = silu(gate[i]) * up[i]. `out` may alias `gate`.
void swiglu(float* out, const float* gate, const float* up, std::int64_t n);

/// sum a[i] * b[i].
float dot(const float* a, const float* b, std::int64_t n);

/// y[i] += a * x[i].
void axpy(float* y, float a, const float* x, std::int64_t n);

}  // namespace ember::kernels

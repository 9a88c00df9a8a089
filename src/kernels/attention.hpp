// Attention of one batch row against its cached keys/values, for the query heads that share one
// key/value head (grouped-query attention). Per ISA through FloatKernels::attend.
//
//   for j < n_q:  s[t] = dot(q_j, K[t]) * scale (t < n_pos);  p = softmax(s);
//                 out_j = sum_t p[t] * V[t]
// q_j = q + j * hd, out_j = out + j * hd, K[t] = k + t * kv_stride, V[t] = v + t * kv_stride.
// `scores` holds n_q * n_pos floats. Softmax: max-shifted exp, sum in float, out scaled by 1/sum.
#pragma once

#include <cstdint>

namespace ember::kernels {

using AttendFn = void (*)(const float* q, std::int64_t n_q, std::int64_t hd, const float* k,
                          const float* v, std::int64_t kv_stride, std::int64_t n_pos, float scale,
                          float* out, float* scores);

/// AttendFn with soft-capped scores (gemma2): s[t] = cap * tanh(dot(q_j, K[t]) * scale / cap),
/// computed as llama.cpp does ((s * (1/cap)), tanh, * cap) before the softmax; cap 0: none.
/// Scalar on every ISA for now (attention_softcap.cpp).
void attend_softcap(const float* q, std::int64_t n_q, std::int64_t hd, const float* k,
                    const float* v, std::int64_t kv_stride, std::int64_t n_pos, float scale,
                    float softcap, float* out, float* scores);

}  // namespace ember::kernels

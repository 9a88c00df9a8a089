// Attention of one batch row against its sequence's cached keys/values, for the query heads that
// share one key/value head (grouped-query attention). The cache is paged: the positions come as
// runs of consecutive rows (one run per page, model/kv_cache.hpp), stored as F32, F16 or Q8_0
// and read in place. Per ISA and KvType through FloatKernels::attend_f32 / _f16 / _q8_0.
//
//   for j < n_q:  s[t] = scale * dot(q_j, K[t])  (t < n_pos, the runs' rows in order);
//                 softcap > 0 (gemma2): s[t] = tanh(s[t] * (1 / softcap)) * softcap, as llama.cpp;
//                 p = softmax(s);  out_j = sum_t p[t] * V[t]
// q_j = q + j * hd, out_j = out + j * hd. K[t] / V[t]: hd values of one head, rows row_bytes
// apart within a run; Q8_0 rows are hd / 32 blocks (value = d * q). `scores` holds n_q * n_pos
// floats. Softmax: max-shifted exp, sum in float, out scaled by 1/sum.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

/// n consecutive rows of one head: K[t] = k + t * row_bytes, V[t] = v + t * row_bytes.
struct KvRun {
    const std::uint8_t* k;
    const std::uint8_t* v;
    std::int64_t n;
};

using AttendFn = void (*)(const float* q, std::int64_t n_q, std::int64_t hd, const KvRun* runs,
                          std::int64_t n_runs, std::size_t row_bytes, std::int64_t n_pos,
                          float scale, float softcap, float* out, float* scores);

}  // namespace ember::kernels

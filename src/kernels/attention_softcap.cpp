// Attention with soft-capped scores (kernels/attention.hpp, attend_softcap).
#include <cmath>

#include "kernels/attention.hpp"

namespace ember::kernels {

void attend_softcap(const float* q, std::int64_t n_q, std::int64_t hd, const float* k,
                    const float* v, std::int64_t kv_stride, std::int64_t n_pos, float scale,
                    float softcap, float* out, float* scores) {
    const float inv_cap = softcap > 0.0f ? 1.0f / softcap : 0.0f;
    for (std::int64_t j = 0; j < n_q; ++j) {
        const float* qj = q + j * hd;
        float* s = scores + j * n_pos;
        float max = -INFINITY;
        for (std::int64_t t = 0; t < n_pos; ++t) {
            const float* kt = k + t * kv_stride;
            float d = 0.0f;
            for (std::int64_t i = 0; i < hd; ++i) d += qj[i] * kt[i];
            s[t] = d * scale;
            if (softcap > 0.0f) s[t] = std::tanh(s[t] * inv_cap) * softcap;
            max = s[t] > max ? s[t] : max;
        }
        float sum = 0.0f;
        for (std::int64_t t = 0; t < n_pos; ++t) {
            s[t] = std::exp(s[t] - max);
            sum += s[t];
        }
        float* o = out + j * hd;
        for (std::int64_t i = 0; i < hd; ++i) o[i] = 0.0f;
        for (std::int64_t t = 0; t < n_pos; ++t) {
            const float* vt = v + t * kv_stride;
            for (std::int64_t i = 0; i < hd; ++i) o[i] += s[t] * vt[i];
        }
        const float inv = 1.0f / sum;
        for (std::int64_t i = 0; i < hd; ++i) o[i] *= inv;
    }
}

}  // namespace ember::kernels

// Scalar twins of the float kernels (float_kernels-inl.hpp): the test oracle and the
// EMBER_ISA=scalar path. Dots of float rows sum in double; the rest is plain float arithmetic in
// the order a reader expects (ggml's where llama.cpp parity matters: RMSNorm sums x*x in double).
#include <cmath>
#include <cstring>

#include "kernels/fp16.hpp"
#include "kernels/kv_grid.hpp"
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/quants.hpp"

namespace ember::kernels::scalar {
namespace {

// Element i of an array that may sit at any address (tests pass odd offsets).
template <class T>
T load_at(const void* p, std::int64_t i) {
    T v;
    std::memcpy(&v, static_cast<const unsigned char*>(p) + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    return v;
}

template <class Widen>
float dot_16bit(std::int64_t n, const void* w, const void* a, Widen widen) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        sum += static_cast<double>(widen(load_at<std::uint16_t>(w, i)) * widen(load_at<std::uint16_t>(a, i)));
    }
    return static_cast<float>(sum);
}

}  // namespace

float vec_dot_f32(std::int64_t n, const void* w, const void* a) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(load_at<float>(w, i) * load_at<float>(a, i));
    return static_cast<float>(sum);
}
float vec_dot_f16(std::int64_t n, const void* w, const void* a) {  // F32 activations
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
        sum += static_cast<double>(fp16_to_fp32(load_at<std::uint16_t>(w, i)) * load_at<float>(a, i));
    }
    return static_cast<float>(sum);
}
float vec_dot_bf16(std::int64_t n, const void* w, const void* a) { return dot_16bit(n, w, a, bf16_to_fp32); }

void quantize_act_bf16(const float* x, void* dst, std::int64_t n) { ::ember::kernels::quantize_act_bf16(x, dst, n); }
void dequantize_f16(const void* src, float* dst, std::int64_t n) { ::ember::kernels::dequantize_f16(src, dst, n); }
void dequantize_bf16(const void* src, float* dst, std::int64_t n) { ::ember::kernels::dequantize_bf16(src, dst, n); }

void rmsnorm(float* out, const float* x, const float* w, std::int64_t n, float eps) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
    const float mean = static_cast<float>(sum / static_cast<double>(n));
    const float scale = 1.0f / std::sqrt(mean + eps);
    for (std::int64_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * w[i];  // ggml: scale, then mul
}

void swiglu(float* out, const float* gate, const float* up, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        out[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
}

void geglu(float* out, const float* gate, const float* up, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        out[i] = 0.5f * g * (1.0f + std::tanh(0.7978845608028654f * (g + 0.044715f * g * g * g))) * up[i];
    }
}

void add(float* y, const float* x, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void rope(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot, const float* cs,
          bool neox) {
    const std::int64_t half = n_rot / 2;
    for (std::int64_t h = 0; h < n_heads; ++h) {
        float* v = x + h * head_dim;
        for (std::int64_t i = 0; i < half; ++i) {
            float& x0 = neox ? v[i] : v[2 * i];
            float& x1 = neox ? v[i + half] : v[2 * i + 1];
            const float c = cs[2 * i], s = cs[2 * i + 1];
            const float a = x0, b = x1;
            x0 = a * c - b * s;
            x1 = a * s + b * c;
        }
    }
}

namespace {

// Value i of position u of a run (its value slabs: [slab][position][value]; F32, F16, or Q8_0:
// d * q, a block a slab).
template <int T>
float kv_value(const KvRun& run, std::int64_t u, std::int64_t i, std::int64_t hd) {
    const std::int64_t w = slab_values(hd);
    const std::uint8_t* slab = run.v + slab_at(i / w, run.first + u, run.block, slab_bytes<T>(hd));
    if constexpr (T == 0) {
        return load_at<float>(slab, i % w);
    } else if constexpr (T == 1) {
        return fp16_to_fp32(load_at<std::uint16_t>(slab, i % w));
    } else {
        const auto q = static_cast<std::int8_t>(slab[2 + i % 32]);
        return static_cast<float>(q) * fp16_to_fp32(load_at<std::uint16_t>(slab, 0));
    }
}

// Dim i of key u of a run (its key grid: [dim][position], Q8_0 scales after the quants).
template <int T>
float kv_key(const KvRun& run, std::int64_t u, std::int64_t i, std::int64_t hd) {
    constexpr std::size_t kElement = kGridElement<T>;
    const std::uint8_t* at = run.k + grid_at(i, run.first + u, run.block, kElement);
    if constexpr (T == 0) {
        return load_at<float>(at, 0);
    } else if constexpr (T == 1) {
        return fp16_to_fp32(load_at<std::uint16_t>(at, 0));
    } else {
        const float d = fp16_to_fp32(load_at<std::uint16_t>(run.k + grid_scale_at(hd, i, run.first + u, run.block), 0));
        return static_cast<float>(static_cast<std::int8_t>(*at)) * d;
    }
}

/// One row's n_q heads against the n_pos keys from key `start`.
template <int T>
void attend_row_kv(const float* q, std::int64_t n_q, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                   std::int64_t start, std::int64_t n_pos, float scale, float softcap,
                   float* out, float* scores) {
    const float inv_cap = softcap > 0.0f ? 1.0f / softcap : 0.0f;
    for (std::int64_t j = 0; j < n_q; ++j) {
        const float* qj = q + j * hd;
        float* s = scores + j * n_pos;
        float max = -INFINITY;
        std::int64_t t = -start;  // the row's keys are t in [0, n_pos)
        for (std::int64_t r = 0; r < n_runs; ++r) {
            for (std::int64_t u = 0; u < runs[r].n && t < n_pos; ++u, ++t) {
                if (t < 0) continue;
                float d = 0.0f;
                for (std::int64_t i = 0; i < hd; ++i) d = std::fma(qj[i], kv_key<T>(runs[r], u, i, hd), d);
                s[t] = d * scale;
                if (softcap > 0.0f) s[t] = std::tanh(s[t] * inv_cap) * softcap;
                max = s[t] > max ? s[t] : max;
            }
        }
        float sum = 0.0f;
        for (t = 0; t < n_pos; ++t) {
            s[t] = std::exp(s[t] - max);
            sum += s[t];
        }
        float* o = out + j * hd;
        for (std::int64_t i = 0; i < hd; ++i) o[i] = 0.0f;
        t = -start;
        for (std::int64_t r = 0; r < n_runs; ++r) {
            for (std::int64_t u = 0; u < runs[r].n && t < n_pos; ++u, ++t) {
                if (t < 0) continue;
                for (std::int64_t i = 0; i < hd; ++i) o[i] += s[t] * kv_value<T>(runs[r], u, i, hd);
            }
        }
        const float inv = 1.0f / sum;
        for (std::int64_t i = 0; i < hd; ++i) o[i] *= inv;
    }
}

template <int T>
void attend_kv(const AttendQueries& qs, std::int64_t hd, const KvRun* runs, std::int64_t n_runs, float scale,
               float softcap, float* scratch) {
    for (std::int64_t r = 0; r < qs.n_rows; ++r) {
        attend_row_kv<T>(qs.q + r * qs.stride, qs.n_q, hd, runs, n_runs, qs.start ? qs.start[r] : 0,
                         qs.n_pos[r], scale, softcap, qs.out + r * qs.stride, scratch);
    }
}

}  // namespace

void attend_f32(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                float scale, float softcap, float* scratch) {
    attend_kv<0>(queries, hd, runs, n_runs, scale, softcap, scratch);
}
void attend_f16(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                float scale, float softcap, float* scratch) {
    attend_kv<1>(queries, hd, runs, n_runs, scale, softcap, scratch);
}
void attend_q8_0(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                 float scale, float softcap, float* scratch) {
    attend_kv<2>(queries, hd, runs, n_runs, scale, softcap, scratch);
}

}  // namespace ember::kernels::scalar

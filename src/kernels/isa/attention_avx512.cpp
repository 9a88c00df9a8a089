// AVX-512 attention (kernels/attention.hpp) and SwiGLU with a vectorized exp (Cody-Waite range
// reduction, degree-7 polynomial, vscalefps: within 2 ulp of expf). Head sizes that are multiples
// of 16 up to 256 keep the query and the output accumulators in registers. Kernel code only.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "kernels/attention.hpp"

namespace ember::kernels::avx512 {
namespace {

inline __m512 exp_ps(__m512 x) {
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-88.0f)), _mm512_set1_ps(88.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

inline __mmask16 tail_mask(std::int64_t left) {
    return left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1u);
}

// Softmax numerator in place (s[t] = exp(s[t] - max)); returns the sum.
inline float softmax_exp(float* s, std::int64_t n) {
    __m512 vmax = _mm512_set1_ps(-__builtin_inff());
    for (std::int64_t t = 0; t < n; t += 16) {
        const __mmask16 m = tail_mask(n - t);
        vmax = _mm512_mask_max_ps(vmax, m, vmax, _mm512_maskz_loadu_ps(m, s + t));
    }
    const __m512 mx = _mm512_set1_ps(_mm512_reduce_max_ps(vmax));
    __m512 sum = _mm512_setzero_ps();
    for (std::int64_t t = 0; t < n; t += 16) {
        const __mmask16 m = tail_mask(n - t);
        const __m512 e = exp_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, s + t), mx));
        _mm512_mask_storeu_ps(s + t, m, e);
        sum = _mm512_mask_add_ps(sum, m, sum, e);
    }
    return _mm512_reduce_add_ps(sum);
}

// NV = hd / 16 registers per head vector (hd a multiple of 16).
template <int NV>
void attend_fixed(const float* q, std::int64_t n_q, const float* k, const float* v,
                  std::int64_t kv_stride, std::int64_t n_pos, float scale, float* out, float* scores) {
    constexpr std::int64_t hd = 16 * NV;
    for (std::int64_t j = 0; j < n_q; ++j) {
        float* s = scores + j * n_pos;
        __m512 qv[NV];
        for (int c = 0; c < NV; ++c) qv[c] = _mm512_loadu_ps(q + j * hd + 16 * c);
        for (std::int64_t t = 0; t < n_pos; ++t) {
            const float* kt = k + t * kv_stride;
            __m512 a0 = _mm512_mul_ps(qv[0], _mm512_loadu_ps(kt));
            __m512 a1 = NV > 1 ? _mm512_mul_ps(qv[1], _mm512_loadu_ps(kt + 16)) : _mm512_setzero_ps();
            for (int c = 2; c < NV; c += 2) {
                a0 = _mm512_fmadd_ps(qv[c], _mm512_loadu_ps(kt + 16 * c), a0);
                if (c + 1 < NV) a1 = _mm512_fmadd_ps(qv[c + 1], _mm512_loadu_ps(kt + 16 * c + 16), a1);
            }
            s[t] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) * scale;
        }
        const float inv = 1.0f / softmax_exp(s, n_pos);
        __m512 acc[NV];
        for (int c = 0; c < NV; ++c) acc[c] = _mm512_setzero_ps();
        for (std::int64_t t = 0; t < n_pos; ++t) {
            const __m512 p = _mm512_set1_ps(s[t]);
            const float* vt = v + t * kv_stride;
            for (int c = 0; c < NV; ++c) acc[c] = _mm512_fmadd_ps(p, _mm512_loadu_ps(vt + 16 * c), acc[c]);
        }
        const __m512 vi = _mm512_set1_ps(inv);
        for (int c = 0; c < NV; ++c) _mm512_storeu_ps(out + j * hd + 16 * c, _mm512_mul_ps(acc[c], vi));
    }
}

void attend_any(const float* q, std::int64_t n_q, std::int64_t hd, const float* k, const float* v,
                std::int64_t kv_stride, std::int64_t n_pos, float scale, float* out, float* scores) {
    for (std::int64_t j = 0; j < n_q; ++j) {
        float* s = scores + j * n_pos;
        const float* qj = q + j * hd;
        for (std::int64_t t = 0; t < n_pos; ++t) {
            const float* kt = k + t * kv_stride;
            __m512 a = _mm512_setzero_ps();
            for (std::int64_t i = 0; i < hd; i += 16) {
                const __mmask16 m = tail_mask(hd - i);
                a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, qj + i), _mm512_maskz_loadu_ps(m, kt + i), a);
            }
            s[t] = _mm512_reduce_add_ps(a) * scale;
        }
        const __m512 vi = _mm512_set1_ps(1.0f / softmax_exp(s, n_pos));
        float* o = out + j * hd;
        for (std::int64_t i = 0; i < hd; i += 16) {
            const __mmask16 m = tail_mask(hd - i);
            __m512 acc = _mm512_setzero_ps();
            for (std::int64_t t = 0; t < n_pos; ++t) {
                acc = _mm512_fmadd_ps(_mm512_set1_ps(s[t]), _mm512_maskz_loadu_ps(m, v + t * kv_stride + i), acc);
            }
            _mm512_mask_storeu_ps(o + i, m, _mm512_mul_ps(acc, vi));
        }
    }
}

}  // namespace

void attend(const float* q, std::int64_t n_q, std::int64_t hd, const float* k, const float* v,
            std::int64_t kv_stride, std::int64_t n_pos, float scale, float* out, float* scores) {
    switch (hd) {
        case 64: attend_fixed<4>(q, n_q, k, v, kv_stride, n_pos, scale, out, scores); return;
        case 128: attend_fixed<8>(q, n_q, k, v, kv_stride, n_pos, scale, out, scores); return;
        case 32: attend_fixed<2>(q, n_q, k, v, kv_stride, n_pos, scale, out, scores); return;
        case 256: attend_fixed<16>(q, n_q, k, v, kv_stride, n_pos, scale, out, scores); return;
        default: attend_any(q, n_q, hd, k, v, kv_stride, n_pos, scale, out, scores); return;
    }
}

// out = gate / (1 + exp(-gate)) * up (ggml's silu), 16 values at a time.
void swiglu(float* out, const float* gate, const float* up, std::int64_t n) {
    const __m512 one = _mm512_set1_ps(1.0f);
    for (std::int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
        const __m512 silu = _mm512_div_ps(g, _mm512_add_ps(one, exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), g))));
        _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(silu, _mm512_maskz_loadu_ps(m, up + i)));
    }
}

}  // namespace ember::kernels::avx512

// Reference K-quant quantizers and dequantizers. The quantizers follow ggml's reference
// algorithms (quantize_row_q{4,5,6}_K_ref without an importance matrix) step by step and in the
// same floating-point order, so the blocks we write match llama.cpp's and load there.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/fp16.hpp"
#include "kernels/kquant.hpp"
#include "runtime/fail.hpp"

namespace ember::kernels {
namespace {

constexpr float kGroupMaxEps = 1e-15f;

/// Round to nearest (ties to even) for |x| <= 4194303, as ggml's nearest_int: adding 1.5*2^23
/// leaves the rounded integer in the low mantissa bits.
int nearest_int(float x) {
    const float v = x + 12582912.f;
    const auto bits = std::bit_cast<std::int32_t>(v);
    return (bits & 0x007FFFFF) - 0x00400000;
}

void check_length(std::int64_t n, const char* what) {
    if (n < 0 || n % kQK_K != 0) {
        fail(std::string(what) + ": row length " + std::to_string(n) +
             " is not a multiple of 256");
    }
}

/// Scale and min for n values on the grid [0, nmax] (ggml's make_qkx2_quants): start from
/// min/max, then try nstep+1 inverse scales (nmax + rmin + rdelta*is)/(max - min), refitting
/// scale and min by weighted least squares and keeping the lowest weighted squared error.
/// Returns the scale; *neg_min receives -min (>= 0). L receives the levels.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, std::uint8_t* L,
                       float* neg_min, std::uint8_t* Laux, float rmin, float rdelta,
                       int nstep) {
    float min = x[0];
    float max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weights[i];
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *neg_min = -min;
        return 0.f;
    }
    float iscale = nmax / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<std::uint8_t>(std::max(0, std::min(nmax, l)));
        const float diff = scale * L[i] + min - x[i];
        best_error += weights[i] * (diff * diff);
    }
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * is + nmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * (x[i] - min));
            l = std::max(0, std::min(nmax, l));
            Laux[i] = static_cast<std::uint8_t>(l);
            const float w = weights[i];
            sum_l += w * l;
            sum_l2 += w * l * l;
            sum_xl += w * l * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float cur_error = 0;
            for (int i = 0; i < n; ++i) {
                const float diff = this_scale * Laux[i] + this_min - x[i];
                cur_error += weights[i] * (diff * diff);
            }
            if (cur_error < best_error) {
                std::memcpy(L, Laux, static_cast<std::size_t>(n));
                best_error = cur_error;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *neg_min = -min;
    return scale;
}

/// Symmetric scale for n values on the grid [-nmax, nmax-1] (ggml's make_qx_quants with
/// rmse_type 1 and no importance weights): iscale = -nmax/max of the largest-magnitude value,
/// then 18 nearby inverse scales, keeping the best x^2-weighted least-squares fit.
/// L receives levels offset by +nmax.
float make_qx_quants(int n, int nmax, const float* x, std::int8_t* L) {
    float max = 0;
    float amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) {
            amax = ax;
            max = x[i];
        }
    }
    if (amax < kGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.f;
    }
    float iscale = -nmax / max;
    float sumlx = 0;
    float suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = nearest_int(iscale * x[i]);
        l = std::max(-nmax, std::min(nmax - 1, l));
        L[i] = static_cast<std::int8_t>(l + nmax);
        const float w = x[i] * x[i];
        sumlx += w * x[i] * l;
        suml2 += w * l * l;
    }
    float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        iscale = -(nmax + 0.1f * is) / max;
        sumlx = suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = nearest_int(iscale * x[i]);
            l = std::max(-nmax, std::min(nmax - 1, l));
            const float w = x[i] * x[i];
            sumlx += w * x[i] * l;
            suml2 += w * l * l;
        }
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            for (int i = 0; i < n; ++i) {
                const int l = nearest_int(iscale * x[i]);
                L[i] = static_cast<std::int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
            }
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

/// Packs 8 six-bit scales and mins into the 12 bytes kq_scale_min_k4 reads.
void pack_scales_k4(const std::uint8_t* ls, const std::uint8_t* lm, std::uint8_t* out) {
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            out[j] = ls[j];
            out[j + 4] = lm[j];
        } else {
            out[j + 4] = static_cast<std::uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            out[j - 4] |= static_cast<std::uint8_t>((ls[j] >> 4) << 6);
            out[j - 0] |= static_cast<std::uint8_t>((lm[j] >> 4) << 6);
        }
    }
}

/// Shared first half of Q4_K/Q5_K: per sub-block scale/min fits, 6-bit scales, then the final
/// levels L[256] in [0, nmax] against the rounded scales.
void quantize_scales_k4(const float* x, int nmax, float rmin, float rdelta, int nstep,
                        std::uint16_t* d_out, std::uint16_t* dmin_out, std::uint8_t* packed,
                        std::uint8_t* L) {
    float mins[kQK_K / 32];
    float scales[kQK_K / 32];
    float weights[32];
    std::uint8_t Laux[32];
    float max_scale = 0;
    float max_min = 0;
    for (int j = 0; j < kQK_K / 32; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
        scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux,
                                     rmin, rdelta, nstep);
        if (scales[j] > max_scale) max_scale = scales[j];
        if (mins[j] > max_min) max_min = mins[j];
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    std::uint8_t ls[8], lm[8];
    for (int j = 0; j < kQK_K / 32; ++j) {
        // ggml stores nearest_int into a uint8_t before clamping to 63.
        ls[j] = std::min<std::uint8_t>(63, static_cast<std::uint8_t>(nearest_int(inv_scale * scales[j])));
        lm[j] = std::min<std::uint8_t>(63, static_cast<std::uint8_t>(nearest_int(inv_min * mins[j])));
    }
    std::memset(packed, 0, kKScaleBytes);
    pack_scales_k4(ls, lm, packed);
    *d_out = fp32_to_fp16(max_scale / 63.f);
    *dmin_out = fp32_to_fp16(max_min / 63.f);

    for (int j = 0; j < kQK_K / 32; ++j) {
        std::uint8_t sc, m;
        kq_scale_min_k4(j, packed, &sc, &m);
        const float d = fp16_to_fp32(*d_out) * sc;
        if (d == 0) continue;  // keep the first-pass levels, as ggml does
        const float dm = fp16_to_fp32(*dmin_out) * m;
        for (int ii = 0; ii < 32; ++ii) {
            const int l = nearest_int((x[32 * j + ii] + dm) / d);
            L[32 * j + ii] = static_cast<std::uint8_t>(std::max(0, std::min(nmax, l)));
        }
    }
}

}  // namespace

void quantize_row_q4_k(const float* x, BlockQ4K* y, std::int64_t n) {
    check_length(n, "quantize_row_q4_k");
    std::uint8_t L[kQK_K];
    for (std::int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
        quantize_scales_k4(x, 15, -1.f, 0.1f, 20, &y[i].d, &y[i].dmin, y[i].scales, L);
        std::uint8_t* q = y[i].qs;
        for (int j = 0; j < kQK_K; j += 64, q += 32) {
            for (int l = 0; l < 32; ++l) q[l] = static_cast<std::uint8_t>(L[j + l] | (L[j + l + 32] << 4));
        }
    }
}

void quantize_row_q5_k(const float* x, BlockQ5K* y, std::int64_t n) {
    check_length(n, "quantize_row_q5_k");
    std::uint8_t L[kQK_K];
    for (std::int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
        quantize_scales_k4(x, 31, -0.5f, 0.1f, 15, &y[i].d, &y[i].dmin, y[i].scales, L);
        std::uint8_t* qh = y[i].qh;
        std::uint8_t* ql = y[i].qs;
        std::memset(qh, 0, kQK_K / 8);
        std::uint8_t m1 = 1, m2 = 2;
        for (int base = 0; base < kQK_K; base += 64, ql += 32) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[base + j];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] |= m1;
                }
                int l2 = L[base + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] |= m2;
                }
                ql[j] = static_cast<std::uint8_t>(l1 | (l2 << 4));
            }
            m1 = static_cast<std::uint8_t>(m1 << 2);
            m2 = static_cast<std::uint8_t>(m2 << 2);
        }
    }
}

void quantize_row_q6_k(const float* x, BlockQ6K* y, std::int64_t n) {
    check_length(n, "quantize_row_q6_k");
    std::int8_t L[kQK_K];
    float scales[kQK_K / 16];
    for (std::int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
        float max_scale = 0;
        float max_abs_scale = 0;
        for (int ib = 0; ib < kQK_K / 16; ++ib) {
            const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib);
            scales[ib] = scale;
            const float abs_scale = std::fabs(scale);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if (max_abs_scale < kGroupMaxEps) {
            std::memset(&y[i], 0, sizeof(BlockQ6K));
            continue;
        }
        const float iscale = -128.f / max_scale;
        y[i].d = fp32_to_fp16(1 / iscale);
        for (int ib = 0; ib < kQK_K / 16; ++ib) {
            y[i].scales[ib] = static_cast<std::int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
        }
        for (int j = 0; j < kQK_K / 16; ++j) {
            const float d = fp16_to_fp32(y[i].d) * y[i].scales[j];
            if (d == 0) continue;
            for (int ii = 0; ii < 16; ++ii) {
                int l = nearest_int(x[16 * j + ii] / d);
                l = std::max(-32, std::min(31, l));
                L[16 * j + ii] = static_cast<std::int8_t>(l + 32);
            }
        }
        std::uint8_t* ql = y[i].ql;
        std::uint8_t* qh = y[i].qh;
        for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; ++l) {
                const int q1 = L[j + l + 0] & 0xF;
                const int q2 = L[j + l + 32] & 0xF;
                const int q3 = L[j + l + 64] & 0xF;
                const int q4 = L[j + l + 96] & 0xF;
                ql[l + 0] = static_cast<std::uint8_t>(q1 | (q3 << 4));
                ql[l + 32] = static_cast<std::uint8_t>(q2 | (q4 << 4));
                qh[l] = static_cast<std::uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                                  ((L[j + l + 64] >> 4) << 4) |
                                                  ((L[j + l + 96] >> 4) << 6));
            }
        }
    }
}

void quantize_row_q8_k(const float* x, BlockQ8K* y, std::int64_t n) {
    check_length(n, "quantize_row_q8_k");
    for (std::int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
        float max = 0;
        float amax = 0;
        for (int j = 0; j < kQK_K; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        if (amax == 0) {
            std::memset(&y[i], 0, sizeof(BlockQ8K));
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < kQK_K; ++j) {
            y[i].qs[j] = static_cast<std::int8_t>(std::min(127, nearest_int(iscale * x[j])));
        }
        for (int j = 0; j < kQK_K / 16; ++j) {
            int sum = 0;
            for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[j * 16 + ii];
            y[i].bsums[j] = static_cast<std::int16_t>(sum);
        }
        y[i].d = 1 / iscale;
    }
}

void dequantize_row_q4_k(const BlockQ4K* x, float* y, std::int64_t n) {
    check_length(n, "dequantize_row_q4_k");
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        const std::uint8_t* q = x[i].qs;
        const float d = fp16_to_fp32(x[i].d);
        const float min = fp16_to_fp32(x[i].dmin);
        for (int j = 0, is = 0; j < kQK_K; j += 64, q += 32, is += 2) {
            std::uint8_t sc, m;
            kq_scale_min_k4(is + 0, x[i].scales, &sc, &m);
            const float d1 = d * sc, m1 = min * m;
            kq_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
        }
    }
}

void dequantize_row_q5_k(const BlockQ5K* x, float* y, std::int64_t n) {
    check_length(n, "dequantize_row_q5_k");
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        const std::uint8_t* ql = x[i].qs;
        const std::uint8_t* qh = x[i].qh;
        const float d = fp16_to_fp32(x[i].d);
        const float min = fp16_to_fp32(x[i].dmin);
        unsigned u1 = 1, u2 = 2;
        for (int j = 0, is = 0; j < kQK_K; j += 64, ql += 32, is += 2, u1 <<= 2, u2 <<= 2) {
            std::uint8_t sc, m;
            kq_scale_min_k4(is + 0, x[i].scales, &sc, &m);
            const float d1 = d * sc, m1 = min * m;
            kq_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
        }
    }
}

void dequantize_row_q6_k(const BlockQ6K* x, float* y, std::int64_t n) {
    check_length(n, "dequantize_row_q6_k");
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = fp16_to_fp32(x[i].d);
        const std::uint8_t* ql = x[i].ql;
        const std::uint8_t* qh = x[i].qh;
        const std::int8_t* sc = x[i].scales;
        for (int base = 0; base < kQK_K; base += 128, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l + 0] = d * sc[is + 0] * q1;
                y[l + 32] = d * sc[is + 2] * q2;
                y[l + 64] = d * sc[is + 4] * q3;
                y[l + 96] = d * sc[is + 6] * q4;
            }
        }
    }
}

void dequantize_row_q8_k(const BlockQ8K* x, float* y, std::int64_t n) {
    check_length(n, "dequantize_row_q8_k");
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        for (int j = 0; j < kQK_K; ++j) *y++ = x[i].d * x[i].qs[j];
    }
}

}  // namespace ember::kernels

// Scalar K-quant x Q8_K dot products: the oracle the SIMD variants are tested against.
// Each superblock sums exactly in int32 (scale * sum of q*a per sub-block, and the min terms
// from the activation block sums), then once in float.
#include <cstdint>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/kquant_blocks.hpp"

namespace ember::kernels::scalar {

float vec_dot_q4_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockQ4K*>(vx);
    const auto* y = static_cast<const BlockQ8K*>(vy);
    float sum = 0;
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        std::uint8_t sm[16];  // scales 0..7, mins 8..15
        kq_unpack_scales_k4(x[i].scales, sm);
        const std::uint8_t* q = x[i].qs;
        const std::int8_t* a = y[i].qs;
        std::int32_t sumi = 0;
        for (int k = 0; k < 4; ++k, q += 32, a += 64) {
            std::int32_t s0 = 0, s1 = 0;
            for (int l = 0; l < 32; ++l) {
                s0 += (q[l] & 0xF) * a[l];
                s1 += (q[l] >> 4) * a[l + 32];
            }
            sumi += sm[2 * k] * s0 + sm[2 * k + 1] * s1;
        }
        std::int32_t summ = 0;
        for (int j = 0; j < 8; ++j) summ += sm[8 + j] * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
        const float dy = y[i].d;
        sum += dy * kq_fp16_to_fp32(x[i].d) * static_cast<float>(sumi) -
               dy * kq_fp16_to_fp32(x[i].dmin) * static_cast<float>(summ);
    }
    return sum;
}

float vec_dot_q5_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockQ5K*>(vx);
    const auto* y = static_cast<const BlockQ8K*>(vy);
    float sum = 0;
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        std::uint8_t sm[16];
        kq_unpack_scales_k4(x[i].scales, sm);
        const std::uint8_t* q = x[i].qs;
        const std::uint8_t* qh = x[i].qh;
        const std::int8_t* a = y[i].qs;
        std::int32_t sumi = 0;
        for (int k = 0; k < 4; ++k, q += 32, a += 64) {
            std::int32_t s0 = 0, s1 = 0;
            for (int l = 0; l < 32; ++l) {
                const int v0 = (q[l] & 0xF) | (((qh[l] >> (2 * k)) & 1) << 4);
                const int v1 = (q[l] >> 4) | (((qh[l] >> (2 * k + 1)) & 1) << 4);
                s0 += v0 * a[l];
                s1 += v1 * a[l + 32];
            }
            sumi += sm[2 * k] * s0 + sm[2 * k + 1] * s1;
        }
        std::int32_t summ = 0;
        for (int j = 0; j < 8; ++j) summ += sm[8 + j] * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
        const float dy = y[i].d;
        sum += dy * kq_fp16_to_fp32(x[i].d) * static_cast<float>(sumi) -
               dy * kq_fp16_to_fp32(x[i].dmin) * static_cast<float>(summ);
    }
    return sum;
}

float vec_dot_q6_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* x = static_cast<const BlockQ6K*>(vx);
    const auto* y = static_cast<const BlockQ8K*>(vy);
    float sum = 0;
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        const std::uint8_t* ql = x[i].ql;
        const std::uint8_t* qh = x[i].qh;
        const std::int8_t* sc = x[i].scales;
        const std::int8_t* a = y[i].qs;
        std::int32_t sumi = 0;
        for (int h = 0; h < 2; ++h, ql += 64, qh += 32, sc += 8, a += 128) {
            for (int half = 0; half < 2; ++half) {  // l in [16*half, 16*half + 16): one scale
                std::int32_t s[4] = {0, 0, 0, 0};
                for (int l = 16 * half; l < 16 * half + 16; ++l) {
                    const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                    const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                    const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                    const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                    s[0] += q1 * a[l];
                    s[1] += q2 * a[l + 32];
                    s[2] += q3 * a[l + 64];
                    s[3] += q4 * a[l + 96];
                }
                for (int g = 0; g < 4; ++g) sumi += sc[2 * g + half] * s[g];
            }
        }
        sum += y[i].d * kq_fp16_to_fp32(x[i].d) * static_cast<float>(sumi);
    }
    return sum;
}

}  // namespace ember::kernels::scalar

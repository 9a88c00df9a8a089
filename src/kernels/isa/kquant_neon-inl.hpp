// ARM64 K-quant x Q8_K dot products, written once over the int8 dot product of
// legacy_neon-inl.hpp (smull + sadalp, or sdot with FEAT_DotProd). Every sub-block sum is exact
// in int32 and the float steps are the scalar twin's (kquant_scalar.cpp), so results equal it bit
// for bit. Kernel bodies only, internal linkage.
#pragma once

#include "kernels/isa/legacy_neon-inl.hpp"
#include "kernels/kquant_blocks.hpp"

namespace ember::kernels {
namespace {

template <bool kDotprod>
inline std::int32_t dot32(const int8x16_t* w, const std::int8_t* a) {
    return vaddvq_s32(dot16<kDotprod>(dot16<kDotprod>(vdupq_n_s32(0), w[0], vld1q_s8(a)), w[1], vld1q_s8(a + 16)));
}

/// sum_j mins[j] * (bsums[2j] + bsums[2j+1]), exact.
inline std::int32_t mins_dot_bsums(const std::uint8_t* mins, const std::int16_t* bsums) {
    std::int32_t s = 0;
    for (int j = 0; j < 8; ++j) s += mins[j] * (bsums[2 * j] + bsums[2 * j + 1]);
    return s;
}

template <bool kDotprod, bool kQ5>
float dot_q45_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* x = static_cast<const std::uint8_t*>(vx);
    const auto* y = static_cast<const BlockQ8K*>(vy);
    const std::size_t bytes = kQ5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K);
    float sum = 0;
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        const std::uint8_t* xb = x + static_cast<std::size_t>(i) * bytes;
        BlockQ8K yb;
        __builtin_memcpy(&yb, &y[i], sizeof yb);
        std::uint8_t sm[16];
        kq_unpack_scales_k4(xb + offsetof(BlockQ4K, scales), sm);
        const std::uint8_t* q = xb + (kQ5 ? offsetof(BlockQ5K, qs) : offsetof(BlockQ4K, qs));
        uint8x16_t qh[2] = {vdupq_n_u8(0), vdupq_n_u8(0)};
        if constexpr (kQ5) {
            qh[0] = vld1q_u8(xb + offsetof(BlockQ5K, qh));
            qh[1] = vld1q_u8(xb + offsetof(BlockQ5K, qh) + 16);
        }
        std::int32_t sumi = 0;
        for (int k = 0; k < 4; ++k, q += 32) {
            int8x16_t lo[2], hi[2];
            for (int h = 0; h < 2; ++h) {
                const uint8x16_t b = vld1q_u8(q + 16 * h);
                uint8x16_t l = vandq_u8(b, vdupq_n_u8(0x0f)), u = vshrq_n_u8(b, 4);
                if constexpr (kQ5) {  // bit 2k of qh[l] -> value 64k + l, bit 2k+1 -> 64k + 32 + l
                    const uint8x16_t one = vdupq_n_u8(1);
                    l = vorrq_u8(l, vshlq_n_u8(vandq_u8(vshlq_u8(qh[h], vdupq_n_s8(static_cast<std::int8_t>(-2 * k))), one), 4));
                    u = vorrq_u8(u, vshlq_n_u8(vandq_u8(vshlq_u8(qh[h], vdupq_n_s8(static_cast<std::int8_t>(-2 * k - 1))), one), 4));
                }
                lo[h] = vreinterpretq_s8_u8(l);
                hi[h] = vreinterpretq_s8_u8(u);
            }
            const std::int32_t s0 = dot32<kDotprod>(lo, yb.qs + 64 * k);
            const std::int32_t s1 = dot32<kDotprod>(hi, yb.qs + 64 * k + 32);
            sumi += sm[2 * k] * s0 + sm[2 * k + 1] * s1;
        }
        const std::int32_t summ = mins_dot_bsums(sm + 8, yb.bsums);
        const float dy = yb.d;
        sum += dy * kq_fp16_to_fp32(kq_ld_u16(xb + offsetof(BlockQ4K, d))) * static_cast<float>(sumi) -
               dy * kq_fp16_to_fp32(kq_ld_u16(xb + offsetof(BlockQ4K, dmin))) * static_cast<float>(summ);
    }
    return sum;
}

template <bool kDotprod>
float dot_q6_k(std::int64_t n, const void* vx, const void* vy) {
    const auto* x = static_cast<const std::uint8_t*>(vx);
    const auto* y = static_cast<const BlockQ8K*>(vy);
    const uint8x16_t m4 = vdupq_n_u8(0x0f), m3 = vdupq_n_u8(3);
    const int8x16_t m32 = vdupq_n_s8(32);
    float sum = 0;
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        const std::uint8_t* xb = x + static_cast<std::size_t>(i) * sizeof(BlockQ6K);
        BlockQ8K yb;
        __builtin_memcpy(&yb, &y[i], sizeof yb);
        const std::uint8_t* ql = xb + offsetof(BlockQ6K, ql);
        const std::uint8_t* qh = xb + offsetof(BlockQ6K, qh);
        std::int8_t sc[16];
        __builtin_memcpy(sc, xb + offsetof(BlockQ6K, scales), 16);
        const std::int8_t* a = yb.qs;
        std::int32_t sumi = 0;
        for (int h = 0; h < 2; ++h, ql += 64, qh += 32, a += 128) {
            for (int half = 0; half < 2; ++half) {
                const uint8x16_t l0 = vld1q_u8(ql + 16 * half), l1 = vld1q_u8(ql + 32 + 16 * half);
                const uint8x16_t hb = vld1q_u8(qh + 16 * half);
                const uint8x16_t q[4] = {
                    vorrq_u8(vandq_u8(l0, m4), vshlq_n_u8(vandq_u8(hb, m3), 4)),
                    vorrq_u8(vandq_u8(l1, m4), vshlq_n_u8(vandq_u8(vshrq_n_u8(hb, 2), m3), 4)),
                    vorrq_u8(vshrq_n_u8(l0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(hb, 4), m3), 4)),
                    vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(hb, 6), 4))};
                for (int g = 0; g < 4; ++g) {
                    const int8x16_t w = vsubq_s8(vreinterpretq_s8_u8(q[g]), m32);
                    const std::int32_t s =
                        vaddvq_s32(dot16<kDotprod>(vdupq_n_s32(0), w, vld1q_s8(a + 32 * g + 16 * half)));
                    sumi += sc[8 * h + 2 * g + half] * s;
                }
            }
        }
        sum += yb.d * kq_fp16_to_fp32(kq_ld_u16(xb + offsetof(BlockQ6K, d))) * static_cast<float>(sumi);
    }
    return sum;
}

}  // namespace
}  // namespace ember::kernels

#define EMBER_KQUANT_NEON_EXPORTS(kDotprod)                                                            \
    float vec_dot_q4_k(std::int64_t n, const void* x, const void* y) { return dot_q45_k<kDotprod, false>(n, x, y); } \
    float vec_dot_q5_k(std::int64_t n, const void* x, const void* y) { return dot_q45_k<kDotprod, true>(n, x, y); } \
    float vec_dot_q6_k(std::int64_t n, const void* x, const void* y) { return dot_q6_k<kDotprod>(n, x, y); }

// ARM64 K-quant x Q8_K dot products and tiles, written once over the int8 dot product of
// legacy_neon-inl.hpp (smull + sadalp, or sdot with FEAT_DotProd). One weight row runs against up
// to 4 activation rows (the tiles: each superblock is unpacked once for all of them; one row is
// vec_dot). Every superblock sum is exact in int32 and the float steps per token are the scalar
// twin's (kquant_scalar.cpp), so results equal it bit for bit whatever the token count.
// Kernel bodies only, internal linkage.
#pragma once

#include "kernels/isa/legacy_neon-inl.hpp"
#include "kernels/isa/tile_sweep-inl.hpp"
#include "kernels/kquant_blocks.hpp"

namespace ember::kernels {
namespace {

/// The int32 lanes of sum_l w[l] * a[l] over 32 int8 values (two registers of w).
template <bool kDotprod>
inline int32x4_t dot32(const int8x16_t* w, const std::int8_t* a) {
    return dot16<kDotprod>(dot16<kDotprod>(vdupq_n_s32(0), w[0], vld1q_s8(a)), w[1], vld1q_s8(a + 16));
}

/// sum_j mins[j] * (bsums[2j] + bsums[2j+1]), exact.
inline std::int32_t mins_dot_bsums(const std::uint8_t* mins, const std::int16_t* bsums) {
    std::int32_t s = 0;
    for (int j = 0; j < 8; ++j) s += mins[j] * (bsums[2 * j] + bsums[2 * j + 1]);
    return s;
}

/// Q8_K block i of NT activation rows a_stride bytes apart (at BlockQ8K's alignment: scratch
/// rows are 64-byte aligned and the block is 292 bytes).
template <int NT>
inline void q8k_blocks(const std::uint8_t* a, std::size_t a_stride, std::int64_t i, const BlockQ8K* (&y)[NT]) {
    for (int t = 0; t < NT; ++t) {
        y[t] = reinterpret_cast<const BlockQ8K*>(a + static_cast<std::size_t>(t) * a_stride) + i;
    }
}

/// One Q4_K / Q5_K weight row against NT activation rows; out[t] for each.
template <bool kDotprod, bool kQ5, int NT>
void dot_q45_k(std::int64_t n, const void* vx, const std::uint8_t* a, std::size_t a_stride, float* out) {
    const auto* x = static_cast<const std::uint8_t*>(vx);
    const std::size_t bytes = kQ5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K);
    float sum[NT] = {};
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        const std::uint8_t* xb = x + static_cast<std::size_t>(i) * bytes;
        const BlockQ8K* yb[NT];
        q8k_blocks<NT>(a, a_stride, i, yb);
        std::uint8_t sm[16];
        kq_unpack_scales_k4(xb + offsetof(BlockQ4K, scales), sm);
        const std::uint8_t* q = xb + (kQ5 ? offsetof(BlockQ5K, qs) : offsetof(BlockQ4K, qs));
        uint8x16_t qh[2] = {vdupq_n_u8(0), vdupq_n_u8(0)};
        if constexpr (kQ5) {
            qh[0] = vld1q_u8(xb + offsetof(BlockQ5K, qh));
            qh[1] = vld1q_u8(xb + offsetof(BlockQ5K, qh) + 16);
        }
        int32x4_t sumv[NT];
        for (int t = 0; t < NT; ++t) sumv[t] = vdupq_n_s32(0);
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
            for (int t = 0; t < NT; ++t) {  // the sub-block scales applied in the int32 lanes
                sumv[t] = vmlaq_n_s32(sumv[t], dot32<kDotprod>(lo, yb[t]->qs + 64 * k), sm[2 * k]);
                sumv[t] = vmlaq_n_s32(sumv[t], dot32<kDotprod>(hi, yb[t]->qs + 64 * k + 32), sm[2 * k + 1]);
            }
        }
        const float d = kq_fp16_to_fp32(kq_ld_u16(xb + offsetof(BlockQ4K, d)));
        const float dmin = kq_fp16_to_fp32(kq_ld_u16(xb + offsetof(BlockQ4K, dmin)));
        for (int t = 0; t < NT; ++t) {
            const std::int32_t sumi = vaddvq_s32(sumv[t]);
            const std::int32_t summ = mins_dot_bsums(sm + 8, yb[t]->bsums);
            const float dy = yb[t]->d;
            sum[t] += dy * d * static_cast<float>(sumi) - dy * dmin * static_cast<float>(summ);
        }
    }
    for (int t = 0; t < NT; ++t) out[t] = sum[t];
}

/// One Q6_K weight row against NT activation rows.
template <bool kDotprod, int NT>
void dot_q6_k(std::int64_t n, const void* vx, const std::uint8_t* a, std::size_t a_stride, float* out) {
    const auto* x = static_cast<const std::uint8_t*>(vx);
    const uint8x16_t m4 = vdupq_n_u8(0x0f), m3 = vdupq_n_u8(3);
    const int8x16_t m32 = vdupq_n_s8(32);
    float sum[NT] = {};
    for (std::int64_t i = 0; i < n / kQK_K; ++i) {
        const std::uint8_t* xb = x + static_cast<std::size_t>(i) * sizeof(BlockQ6K);
        const BlockQ8K* yb[NT];
        q8k_blocks<NT>(a, a_stride, i, yb);
        const std::uint8_t* ql = xb + offsetof(BlockQ6K, ql);
        const std::uint8_t* qh = xb + offsetof(BlockQ6K, qh);
        std::int8_t sc[16];
        __builtin_memcpy(sc, xb + offsetof(BlockQ6K, scales), 16);
        int32x4_t sumv[NT];
        for (int t = 0; t < NT; ++t) sumv[t] = vdupq_n_s32(0);
        for (int h = 0; h < 2; ++h, ql += 64, qh += 32) {
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
                    const std::int32_t s = sc[8 * h + 2 * g + half];
                    for (int t = 0; t < NT; ++t) {
                        const std::int8_t* at = yb[t]->qs + 128 * h + 32 * g + 16 * half;
                        sumv[t] = vmlaq_n_s32(sumv[t], dot16<kDotprod>(vdupq_n_s32(0), w, vld1q_s8(at)), s);
                    }
                }
            }
        }
        const float d = kq_fp16_to_fp32(kq_ld_u16(xb + offsetof(BlockQ6K, d)));
        for (int t = 0; t < NT; ++t) sum[t] += yb[t]->d * d * static_cast<float>(vaddvq_s32(sumv[t]));
    }
    for (int t = 0; t < NT; ++t) out[t] = sum[t];
}

/// Token groups of 1, 2, 3 and 4.
template <bool kDotprod>
struct NeonKquantTiles {
    static constexpr MultiDot q4[4] = {dot_q45_k<kDotprod, false, 1>, dot_q45_k<kDotprod, false, 2>,
                                       dot_q45_k<kDotprod, false, 3>, dot_q45_k<kDotprod, false, 4>};
    static constexpr MultiDot q5[4] = {dot_q45_k<kDotprod, true, 1>, dot_q45_k<kDotprod, true, 2>,
                                       dot_q45_k<kDotprod, true, 3>, dot_q45_k<kDotprod, true, 4>};
    static constexpr MultiDot q6[4] = {dot_q6_k<kDotprod, 1>, dot_q6_k<kDotprod, 2>, dot_q6_k<kDotprod, 3>,
                                       dot_q6_k<kDotprod, 4>};
};

}  // namespace
}  // namespace ember::kernels

/// Defines vec_dot_q4_k ... and tile_q4_k ... of the enclosing ISA namespace.
#define EMBER_KQUANT_NEON_EXPORTS(kDotprod)                                                             \
    float vec_dot_q4_k(std::int64_t n, const void* x, const void* y) { return dot1(NeonKquantTiles<kDotprod>::q4[0], n, x, y); } \
    float vec_dot_q5_k(std::int64_t n, const void* x, const void* y) { return dot1(NeonKquantTiles<kDotprod>::q5[0], n, x, y); } \
    float vec_dot_q6_k(std::int64_t n, const void* x, const void* y) { return dot1(NeonKquantTiles<kDotprod>::q6[0], n, x, y); } \
    void tile_q4_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a, std::size_t as,   \
                   std::int64_t n_a, float* y, std::int64_t ldy) {                                                  \
        sweep_rows_by4(NeonKquantTiles<kDotprod>::q4, n, w, ws, n_w, a, as, n_a, y, ldy);                           \
    }                                                                                                               \
    void tile_q5_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a, std::size_t as,   \
                   std::int64_t n_a, float* y, std::int64_t ldy) {                                                  \
        sweep_rows_by4(NeonKquantTiles<kDotprod>::q5, n, w, ws, n_w, a, as, n_a, y, ldy);                           \
    }                                                                                                               \
    void tile_q6_k(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a, std::size_t as,   \
                   std::int64_t n_a, float* y, std::int64_t ldy) {                                                  \
        sweep_rows_by4(NeonKquantTiles<kDotprod>::q6, n, w, ws, n_w, a, as, n_a, y, ldy);                           \
    }

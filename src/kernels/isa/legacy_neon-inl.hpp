// ARM64 kernels of the legacy blocks (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 against Q8_0/Q8_1), written
// once over the int8 dot product: legacy_neon.cpp instantiates it with smull + sadalp (ARMv8-A),
// legacy_neon_dotprod.cpp with sdot (FEAT_DotProd). Each block's integer sum is exact, and the
// float accumulation is the scalar twin's, operation for operation, so results equal
// legacy_scalar.cpp bit for bit. Kernel bodies only, internal linkage.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/fp16.hpp"
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/legacy_blocks.hpp"
#include "kernels/isa/tile_sweep-inl.hpp"

namespace ember::kernels {
namespace {

inline float h2f(std::uint16_t h) {
    return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0);
}

/// acc + sum of a[i] * b[i] over 16 int8 lanes, in 4 int32 lanes.
template <bool kDotprod>
inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
    if constexpr (kDotprod) return vdotq_s32(acc, a, b);
#endif
    const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
    const int16x8_t hi = vmull_high_s8(a, b);
    return vpadalq_s16(vpadalq_s16(acc, lo), hi);
}

/// 0x10 in byte j of the result where bit j of `bits` (16 bits) is set.
inline uint8x16_t fifth_bits(std::uint32_t bits) {
    static const std::uint8_t kMask[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t b = vcombine_u8(vdup_n_u8(static_cast<std::uint8_t>(bits)), vdup_n_u8(static_cast<std::uint8_t>(bits >> 8)));
    return vandq_u8(vtstq_u8(b, vld1q_u8(kMask)), vdupq_n_u8(0x10));
}

/// The 32 weights of a block as signed int8 (q - offset): values 0..15 in lo, 16..31 in hi.
template <int K>
inline void load_weights(const typename Legacy<K>::W& b, int8x16_t& lo, int8x16_t& hi) {
    if constexpr (K == kQ8_0) {
        lo = vld1q_s8(b.qs);
        hi = vld1q_s8(b.qs + 16);
    } else {
        const uint8x16_t q = vld1q_u8(b.qs);
        uint8x16_t l = vandq_u8(q, vdupq_n_u8(0x0f)), h = vshrq_n_u8(q, 4);
        if constexpr (Legacy<K>::five) {
            std::uint32_t qh;
            __builtin_memcpy(&qh, b.qh, 4);
            l = vorrq_u8(l, fifth_bits(qh));
            h = vorrq_u8(h, fifth_bits(qh >> 16));
        }
        const int8x16_t off = vdupq_n_s8(static_cast<std::int8_t>(Legacy<K>::offset));
        lo = vsubq_s8(vreinterpretq_s8_u8(l), off);
        hi = vsubq_s8(vreinterpretq_s8_u8(h), off);
    }
}

/// One block's contribution, in the scalar twin's order (legacy_scalar.cpp).
template <int K>
inline float block_term(float sumf, std::int32_t sumi, const typename Legacy<K>::W& w, const typename Legacy<K>::A& a) {
    const float dw = h2f(w.d), da = h2f(a.d);
    if constexpr (K == kQ4_0) return sumf + static_cast<float>(sumi) * dw * da;
    if constexpr (K == kQ5_0) return sumf + (dw * da) * static_cast<float>(sumi);
    if constexpr (K == kQ8_0) return sumf + static_cast<float>(sumi) * (dw * da);
    if constexpr (Legacy<K>::min) return sumf + ((dw * da) * static_cast<float>(sumi) + h2f(w.m) * h2f(a.s));
    return sumf;
}

template <bool kDotprod>
struct NeonLegacy {
    template <int K>
    struct Micro {
        // R weight rows x T activation rows over nb blocks; y[t * ldy + r].
        template <int R, int T>
        static void run(std::int64_t nb, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                        std::size_t as, float* y, std::int64_t ldy) {
            using WB = typename Legacy<K>::W;
            using AB = typename Legacy<K>::A;
            float acc[R][T] = {};
            for (std::int64_t b = 0; b < nb; ++b) {
                int8x16_t lo[R], hi[R];
                for (int r = 0; r < R; ++r) load_weights<K>(reinterpret_cast<const WB*>(w + r * ws)[b], lo[r], hi[r]);
                for (int t = 0; t < T; ++t) {
                    const AB& ab = reinterpret_cast<const AB*>(a + t * as)[b];
                    const int8x16_t y0 = vld1q_s8(ab.qs), y1 = vld1q_s8(ab.qs + 16);
                    for (int r = 0; r < R; ++r) {
                        const int32x4_t s = dot16<kDotprod>(dot16<kDotprod>(vdupq_n_s32(0), lo[r], y0), hi[r], y1);
                        acc[r][t] = block_term<K>(acc[r][t], vaddvq_s32(s), reinterpret_cast<const WB*>(w + r * ws)[b], ab);
                    }
                }
            }
            for (int r = 0; r < R; ++r)
                for (int t = 0; t < T; ++t) y[t * ldy + r] = acc[r][t];
        }
    };
};

}  // namespace
}  // namespace ember::kernels

// ARMv8-A activation quantizers, bit-identical to the scalar ones: Q8_K (act_q8k-inl.hpp,
// quantize_row_q8_k) for the K-quants and Q8_0 / Q8_1 (act_q8-inl.hpp) for the legacy types;
// every matmul quantizes each token's activations, which had gone through the scalar loops (one
// nearbyint call per value). Built with -ffp-contract=off (src/CMakeLists.txt): the product is
// rounded before ggml's rounding add, as in the scalar code. Kernel code only.
#include <arm_neon.h>

#include "kernels/fp16.hpp"
#include "kernels/isa/act_q8-inl.hpp"
#include "kernels/isa/act_q8k-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"

namespace ember::kernels::neon {
namespace {

// As quantize_q8_block (quants.cpp): amax of |x| (fmaxnm: NaN ignored, as std::max keeps the
// running value), d = amax / 127, q = round-half-even(x * (127 / amax)) by fcvtns, stored as
// the low bytes (the scalar int8 cast); the sum is of the int32 values.
template <bool WithSum>
inline Q8Scale quantize32(const float* x, std::int8_t* qs) {
    float32x4_t v[8];
    float32x4_t m = vdupq_n_f32(0.0f);
    for (int i = 0; i < 8; ++i) {
        v[i] = vld1q_f32(x + 4 * i);
        m = vmaxnmq_f32(m, vabsq_f32(v[i]));
    }
    const float amax = vmaxnmvq_f32(m);
    const float id = amax != 0.0f ? 127.f / amax : 0.0f;
    int32x4_t q[8];
    for (int i = 0; i < 8; ++i) q[i] = vcvtnq_s32_f32(vmulq_n_f32(v[i], id));
    int16x8_t h[4];
    for (int i = 0; i < 4; ++i) h[i] = vcombine_s16(vmovn_s32(q[2 * i]), vmovn_s32(q[2 * i + 1]));
    vst1q_s8(qs, vcombine_s8(vmovn_s16(h[0]), vmovn_s16(h[1])));
    vst1q_s8(qs + 16, vcombine_s8(vmovn_s16(h[2]), vmovn_s16(h[3])));
    int sum = 0;
    if constexpr (WithSum) {
        int32x4_t s = vaddq_s32(vaddq_s32(q[0], q[1]), vaddq_s32(q[2], q[3]));
        s = vaddq_s32(s, vaddq_s32(vaddq_s32(q[4], q[5]), vaddq_s32(q[6], q[7])));
        sum = vaddvq_s32(s);
    }
    return {amax / 127.f, sum};
}

inline float amax256(const float* x) {
    float32x4_t m = vdupq_n_f32(0.0f);
    for (int i = 0; i < 64; ++i) m = vmaxnmq_f32(m, vabsq_f32(vld1q_f32(x + 4 * i)));  // NaN: keeps m
    return vmaxnmvq_f32(m);
}

inline int first_at256(const float* x, float amax) {
    const float32x4_t va = vdupq_n_f32(amax);
    for (int i = 0; i < 64; ++i) {
        if (vmaxvq_u32(vceqq_f32(vabsq_f32(vld1q_f32(x + 4 * i)), va)) != 0) {
            for (int l = 0; l < 4; ++l) {
                if (__builtin_fabsf(x[4 * i + l]) == amax) return 4 * i + l;
            }
        }
    }
    return 0;  // not reached: amax is one of the magnitudes
}

// min(127, nearest_int(iscale * x)) for 16 values, stored as their low bytes (the scalar int8
// cast); returns the sum of the stored bytes.
inline int quantize16_q8k(const float* x, float iscale, std::int8_t* qs) {
    int16x4_t q16[4];
    for (int i = 0; i < 4; ++i) {
        const float32x4_t v = vaddq_f32(vmulq_n_f32(vld1q_f32(x + 4 * i), iscale), vdupq_n_f32(12582912.f));
        int32x4_t q = vsubq_s32(vandq_s32(vreinterpretq_s32_f32(v), vdupq_n_s32(0x007FFFFF)), vdupq_n_s32(0x00400000));
        q16[i] = vmovn_s32(vminq_s32(q, vdupq_n_s32(127)));  // truncating narrows
    }
    const int8x16_t bytes = vcombine_s8(vmovn_s16(vcombine_s16(q16[0], q16[1])), vmovn_s16(vcombine_s16(q16[2], q16[3])));
    vst1q_s8(qs, bytes);
    return vaddlvq_s8(bytes);
}

}  // namespace

EMBER_DEFINE_QUANTIZE_ACT_Q8(quantize32, fp32_to_fp16)

void quantize_act_q8_k(const float* x, void* dst, std::int64_t n) {
    auto* out = static_cast<std::uint8_t*>(dst);
    for (std::int64_t b = 0; b < n / kQK_K; ++b) {
        write_q8k_block(x + b * kQK_K, out + b * sizeof(BlockQ8K), amax256, first_at256, quantize16_q8k);
    }
}

}  // namespace ember::kernels::neon

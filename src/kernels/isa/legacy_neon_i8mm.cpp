// FEAT_I8MM tiles of the legacy blocks: smmla multiplies a 2x8 int8 matrix (8 values of two
// weight rows) by an 8x2 one (two tokens), so one instruction gives 4 partial dots of a 2 x 2
// tile. Each block's integer sums are exact and the float steps are the scalar twin's, so every
// result equals vec_dot bit for bit (batch invariance); edges use the sdot kernels. Built with
// +i8mm; chosen only when HWCAP2 reports i8mm (Isa::neon_i8mm).
#include "kernels/isa/legacy_neon-inl.hpp"

namespace ember::kernels {
namespace {

/// [x[8c..8c+7], y[8c..8c+7]] of two 32-value rows held as (lo, hi) halves.
inline int8x16_t pair_chunk(const int8x16_t* x, const int8x16_t* y, int c) {
    const int8x16_t xs = x[c / 2], ys = y[c / 2];
    return c % 2 == 0 ? vcombine_s8(vget_low_s8(xs), vget_low_s8(ys)) : vcombine_s8(vget_high_s8(xs), vget_high_s8(ys));
}

template <int K>
struct Micro {
    template <int R, int T>
    static void run(std::int64_t nb, const std::uint8_t* w, std::size_t ws, const std::uint8_t* a,
                    std::size_t as, float* y, std::int64_t ldy) {
        if constexpr (R != 2 || T != 2) {
            NeonLegacy<true>::Micro<K>::template run<R, T>(nb, w, ws, a, as, y, ldy);
        } else {
            using WB = typename Legacy<K>::W;
            using AB = typename Legacy<K>::A;
            float acc[2][2] = {};
            for (std::int64_t b = 0; b < nb; ++b) {
                const WB& w0 = reinterpret_cast<const WB*>(w)[b];
                const WB& w1 = reinterpret_cast<const WB*>(w + ws)[b];
                const AB& a0 = reinterpret_cast<const AB*>(a)[b];
                const AB& a1 = reinterpret_cast<const AB*>(a + as)[b];
                int8x16_t r0[2], r1[2];
                load_weights<K>(w0, r0[0], r0[1]);
                load_weights<K>(w1, r1[0], r1[1]);
                const int8x16_t t0[2] = {vld1q_s8(a0.qs), vld1q_s8(a0.qs + 16)};
                const int8x16_t t1[2] = {vld1q_s8(a1.qs), vld1q_s8(a1.qs + 16)};
                int32x4_t s = vdupq_n_s32(0);  // r0.t0, r0.t1, r1.t0, r1.t1
                for (int c = 0; c < 4; ++c) s = vmmlaq_s32(s, pair_chunk(r0, r1, c), pair_chunk(t0, t1, c));
                acc[0][0] = block_term<K>(acc[0][0], vgetq_lane_s32(s, 0), w0, a0);
                acc[0][1] = block_term<K>(acc[0][1], vgetq_lane_s32(s, 1), w0, a1);
                acc[1][0] = block_term<K>(acc[1][0], vgetq_lane_s32(s, 2), w1, a0);
                acc[1][1] = block_term<K>(acc[1][1], vgetq_lane_s32(s, 3), w1, a1);
            }
            for (int r = 0; r < 2; ++r)
                for (int t = 0; t < 2; ++t) y[t * ldy + r] = acc[r][t];
        }
    }
};

}  // namespace

namespace neon_i8mm {
#define EMBER_I8MM_TILE(name, K)                                                                     \
    void tile_##name(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a, \
                     std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {                 \
        sweep_tiles<Micro<K>, 2, 2>(n / kQK, w, ws, n_w, a, as, n_a, y, ldy);                        \
    }
EMBER_I8MM_TILE(q4_0, kQ4_0)
EMBER_I8MM_TILE(q4_1, kQ4_1)
EMBER_I8MM_TILE(q5_0, kQ5_0)
EMBER_I8MM_TILE(q5_1, kQ5_1)
EMBER_I8MM_TILE(q8_0, kQ8_0)
#undef EMBER_I8MM_TILE
}  // namespace neon_i8mm
}  // namespace ember::kernels

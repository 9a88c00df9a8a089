// FEAT_I8MM prefill kernels of the repacked Q4_0 and Q8_0 layouts (kernels/packed.hpp). smmla
// multiplies a 2 x 8 int8 matrix by the transpose of another: with 8 values of two weight rows
// and the same 8 values of two tokens it adds the 4 dots of a 2 x 2 (row, token) tile, 32
// products an instruction where sdot by element adds 16. The layout needs no change: lane r of
// chunks 2c and 2c + 1 holds values 8c..8c+7 of row r, so one zip of two chunk registers gives
// rows (4i, 4i + 1) and the other zip rows (4i + 2, 4i + 3). The sums stay in the 2 x 2 order
// ([r t0, r t1, r+1 t0, r+1 t1]); the row scales and the tokens' da are spread to the same order,
// so the float step is one multiply and one fma per tile as in the sdot kernels, and the exact
// sums and the steps (acc = fma(float(sum), dw * da, acc)) are packed_scalar.cpp's: bit-identical.
// One token (decode) keeps the sdot kernel. Built with +i8mm; chosen when HWCAP2 reports i8mm.
#include "kernels/isa/packed_neon-inl.hpp"

namespace ember::kernels {
namespace {
namespace packed_i8mm {

using Sdot = packed_neon::Kernels<true>;

constexpr int kMaxT = 4;  // two token pairs: 16 accumulators, the 8 weight operands of a row quad

// x[c] = [token t's values 8c..8c+7, token t + 1's] for c < 4 from one 4-structure load of the
// two tokens' 64 adjacent bytes; without a pair (an odd count's last token) token t's twice.
[[gnu::always_inline]] inline void pair_operands(const std::int8_t* at, bool pair, int8x16_t* x) {
    const auto* p = reinterpret_cast<const std::int64_t*>(at);
    const int64x2x4_t v = pair ? vld4q_s64(p) : vld4q_dup_s64(p);
    x[0] = vreinterpretq_s8_s64(v.val[0]);
    x[1] = vreinterpretq_s8_s64(v.val[1]);
    x[2] = vreinterpretq_s8_s64(v.val[2]);
    x[3] = vreinterpretq_s8_s64(v.val[3]);
}

// Row quad i of one block as smmla operands: lo[c] rows (4i, 4i + 1), hi[c] rows (4i + 2, 4i + 3),
// values 8c..8c+7. Q4_0: chunk m's low nibbles are values 4m..4m+3, its high ones 16 + 4m.., so
// the zipped chunks (0, 1) give c = 0 and 2, chunks (2, 3) c = 1 and 3. Q8_0: chunks (2c, 2c + 1).
template <bool Q4>
[[gnu::always_inline]] inline void quad_operands(const std::uint8_t* q, int i, uint8x16_t* lo, uint8x16_t* hi) {
    const auto zip = [&](int m, uint8x16_t& z01, uint8x16_t& z23) {
        const uint32x4_t x = vreinterpretq_u32_u8(vld1q_u8(q + 64 * m + 16 * i));
        const uint32x4_t y = vreinterpretq_u32_u8(vld1q_u8(q + 64 * (m + 1) + 16 * i));
        z01 = vreinterpretq_u8_u32(vzip1q_u32(x, y));
        z23 = vreinterpretq_u8_u32(vzip2q_u32(x, y));
    };
    if constexpr (Q4) {
        uint8x16_t a01, a23, b01, b23;
        zip(0, a01, a23);
        zip(2, b01, b23);
        const uint8x16_t m = vdupq_n_u8(0x0f);
        lo[0] = vandq_u8(a01, m), lo[1] = vandq_u8(b01, m), lo[2] = vshrq_n_u8(a01, 4), lo[3] = vshrq_n_u8(b01, 4);
        hi[0] = vandq_u8(a23, m), hi[1] = vandq_u8(b23, m), hi[2] = vshrq_n_u8(a23, 4), hi[3] = vshrq_n_u8(b23, 4);
    } else {
        for (int c = 0; c < 4; ++c) zip(2 * c, lo[c], hi[c]);
    }
}

// s += weights (2 rows) x tokens (2): Q4_0's nibbles 0..15 as signed bytes; Q8_0's offset-binary
// bytes (w + 128) unsigned, the bias -128 * sum(a) taking the offset back out.
template <bool Q4>
[[gnu::always_inline]] inline int32x4_t mmla(int32x4_t s, uint8x16_t w, int8x16_t x) {
    if constexpr (Q4) {
        return vmmlaq_s32(s, vreinterpretq_s8_u8(w), x);
    } else {
        return vusmmlaq_s32(s, w, x);
    }
}

// [v[t0], v[t1], v[t0], v[t1]]: a per-token value in the 2 x 2 tiles' lane order.
inline int32x4_t pair_lanes(std::int32_t v0, std::int32_t v1) {
    const int32x2_t v = vset_lane_s32(v1, vdup_n_s32(v0), 1);
    return vcombine_s32(v, v);
}
inline float32x4_t pair_lanes(float v0, float v1) {
    const float32x2_t v = vset_lane_f32(v1, vdup_n_f32(v0), 1);
    return vcombine_f32(v, v);
}

// T tokens (2..kMaxT) against one group, in token pairs; as Sdot::group_tokens otherwise.
template <bool Q4, int T>
void group_tokens(std::int64_t nb, const std::uint8_t* wg, const std::int8_t* a, const float* ad,
                  const std::int32_t* ab, std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t rows) {
    if constexpr (T == 1) {
        Sdot::group_tokens<Q4, 1>(nb, wg, a, ad, ab, n_tok, y, ldy, rows);
    } else {
        constexpr int P = (T + 1) / 2;
        constexpr std::size_t kBlock = Q4 ? 4 * 64 : 8 * 64;
        const auto* scales = reinterpret_cast<const float16_t*>(wg + static_cast<std::size_t>(nb) * kBlock);
        float32x4_t acc[P][4][2];  // [pair][row quad][rows (4i, 4i + 1) | (4i + 2, 4i + 3)], 2 x 2 order
        for (int p = 0; p < P; ++p)
            for (int i = 0; i < 4; ++i) acc[p][i][0] = acc[p][i][1] = vdupq_n_f32(0.0f);
        for (std::int64_t b = 0; b < nb; ++b) {
            const std::uint8_t* q = wg + static_cast<std::size_t>(b) * kBlock;
            int32x4_t bias[P];
            float32x4_t da[P];
            for (int p = 0; p < P; ++p) {
                const std::int64_t t0 = b * n_tok + 2 * p, t1 = 2 * p + 1 < T ? t0 + 1 : t0;
                bias[p] = pair_lanes(ab[t0], ab[t1]);
                da[p] = pair_lanes(ad[t0], ad[t1]);
            }
            for (int i = 0; i < 4; ++i) {
                uint8x16_t lo[4], hi[4];
                quad_operands<Q4>(q, i, lo, hi);
                const float32x4_t dw = vcvt_f32_f16(vld1_f16(scales + b * kPackRows + 4 * i));
                const float32x4_t dlo = vzip1q_f32(dw, dw), dhi = vzip2q_f32(dw, dw);
                for (int p = 0; p < P; ++p) {
                    int8x16_t x[4];
                    pair_operands(a + (b * n_tok + 2 * p) * kQK, 2 * p + 1 < T, x);
                    int32x4_t slo = bias[p], shi = bias[p];
                    for (int c = 0; c < 4; ++c) {
                        slo = mmla<Q4>(slo, lo[c], x[c]);
                        shi = mmla<Q4>(shi, hi[c], x[c]);
                    }
                    acc[p][i][0] = vfmaq_f32(acc[p][i][0], vcvtq_f32_s32(slo), vmulq_f32(dlo, da[p]));
                    acc[p][i][1] = vfmaq_f32(acc[p][i][1], vcvtq_f32_s32(shi), vmulq_f32(dhi, da[p]));
                }
            }
        }
        for (int t = 0; t < T; ++t) {  // token t's rows 4i..4i+3: even or odd lanes of the tile pair
            float out[kPackRows];
            float* yt = rows == kPackRows ? y + t * ldy : out;
            for (int i = 0; i < 4; ++i) {
                const float32x4_t* tile = acc[t / 2][i];
                vst1q_f32(yt + 4 * i, t % 2 == 0 ? vuzp1q_f32(tile[0], tile[1]) : vuzp2q_f32(tile[0], tile[1]));
            }
            if (rows < kPackRows) {
                for (std::int64_t r = 0; r < rows; ++r) y[t * ldy + r] = out[r];
            }
        }
    }
}

template <bool Q4>
void gemm(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
          std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* ab,
          std::int64_t n_tok, float* y, std::int64_t ldy) {
    packed_tiles<kMaxT, kQK, 1>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, ab, n_tok, y, ldy,
                                packed_neon::kTokenBlock, []<int T>(auto... x) { group_tokens<Q4, T>(x...); });
}

}  // namespace packed_i8mm
}  // namespace

namespace neon_i8mm {
EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q4_0) {
    packed_i8mm::gemm<true>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy);
}
EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q8_0) {
    packed_i8mm::gemm<false>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy);
}
}  // namespace neon_i8mm
}  // namespace ember::kernels

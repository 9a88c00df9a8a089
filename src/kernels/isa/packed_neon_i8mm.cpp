// FEAT_I8MM prefill kernels of the repacked layouts (kernels/packed.hpp).
// smmla multiplies a 2 x 8 int8 matrix by the transpose of another: with 8 values of two weight
// rows and the same 8 values of two tokens it adds the 4 dots of a 2 x 2 (row, token) tile, 32
// products an instruction where sdot by element adds 16. The layouts need no change: lane r of
// chunk lines 2c and 2c + 1 holds 8 consecutive values of row r, so one zip of the two line
// registers gives rows (4i, 4i + 1) and the other zip rows (4i + 2, 4i + 3). The sums stay in the
// 2 x 2 order ([r t0, r t1, r+1 t0, r+1 t1]); the row scales and the tokens' da and bias are
// spread to the same order (or the K-quants' sums transposed before their float step), so the
// exact sums and the float steps are packed_scalar.cpp's: bit-identical. Tiles of 16 rows x 4
// tokens; fewer tokens (decode) take the sdot kernels. Built with +i8mm; chosen when HWCAP2
// reports i8mm.
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

// Row pairs of 2G chunk lines (64 bytes apart) of row quad i as smmla operands: z[g][0] rows
// (4i, 4i + 1), z[g][1] rows (4i + 2, 4i + 3), each with 4 bytes of line 2g then 4 of 2g + 1.
template <int G>
[[gnu::always_inline]] inline void zip_lines(const std::uint8_t* lines, int i, uint8x16_t (*z)[2]) {
    for (int g = 0; g < G; ++g) {
        const uint32x4_t x = vreinterpretq_u32_u8(vld1q_u8(lines + 128 * g + 16 * i));
        const uint32x4_t y = vreinterpretq_u32_u8(vld1q_u8(lines + 128 * g + 64 + 16 * i));
        z[g][0] = vreinterpretq_u8_u32(vzip1q_u32(x, y));
        z[g][1] = vreinterpretq_u8_u32(vzip2q_u32(x, y));
    }
}

// Row quad i of one block as smmla operands: w[c][h] rows (4i + 2h, 4i + 2h + 1), values
// 8c..8c+7. Q4_0: chunk m's low nibbles are values 4m..4m+3, its high ones 16 + 4m.., so the
// zipped chunks (0, 1) give c = 0 and 2, chunks (2, 3) c = 1 and 3. Q8_0: chunks (2c, 2c + 1).
template <bool Q4>
[[gnu::always_inline]] inline void quad_operands(const std::uint8_t* q, int i, uint8x16_t (*w)[2]) {
    if constexpr (Q4) {
        uint8x16_t z[2][2];
        zip_lines<2>(q, i, z);
        for (int h = 0; h < 2; ++h) {
            for (int g = 0; g < 2; ++g) {
                w[g][h] = vandq_u8(z[g][h], vdupq_n_u8(0x0f));
                w[g + 2][h] = vshrq_n_u8(z[g][h], 4);
            }
        }
    } else {
        zip_lines<4>(q, i, w);
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

// Token t's 4 rows (4i..4i+3) of a tile pair ([rows 4i, 4i+1 | rows 4i+2, 4i+3], 2 x 2 order):
// the even lanes for the pair's first token, the odd ones for its second.
inline float32x4_t token_rows(const float32x4_t* tile, int t) {
    return t % 2 == 0 ? vuzp1q_f32(tile[0], tile[1]) : vuzp2q_f32(tile[0], tile[1]);
}
inline int32x4_t token_rows(const int32x4_t* tile, int t) {
    return t % 2 == 0 ? vuzp1q_s32(tile[0], tile[1]) : vuzp2q_s32(tile[0], tile[1]);
}

// The `rows` valid rows of T tokens' accumulators kept in memory (the K-quant kernels).
template <int T>
inline void store_acc(const float (*acc)[kPackRows], float* y, std::int64_t ldy, std::int64_t rows) {
    for (int t = 0; t < T; ++t) {
        for (std::int64_t r = 0; r < rows; ++r) y[t * ldy + r] = acc[t][r];
    }
}

// T tokens (1..kMaxT) against one group, in token pairs. Not inlined into the sweep (nor is
// group_tokens_q45k): inlined, their registers were allocated worse (qemu counts a unit of 16
// rows x 256 values x token, 8 tokens: Q4_0 614 against 605 as calls, Q4_K 773 against 713).
template <bool Q4, int T>
[[gnu::noinline]] void group_tokens(std::int64_t nb, const std::uint8_t* wg, const std::int8_t* a, const float* ad,
                                    const std::int32_t* ab, std::int64_t n_tok, float* y, std::int64_t ldy,
                                    std::int64_t rows) {
    constexpr int P = (T + 1) / 2;
    constexpr std::size_t kBlock = Q4 ? 4 * 64 : 8 * 64;
    float32x4_t acc[P][4][2];  // [pair][row quad][rows (4i, 4i + 1) | (4i + 2, 4i + 3)], 2 x 2 order
    for (int p = 0; p < P; ++p)
        for (int i = 0; i < 4; ++i) acc[p][i][0] = acc[p][i][1] = vdupq_n_f32(0.0f);
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::uint8_t* q = wg + legacy_quants_at<kBlock>(b);
        const auto* scales = reinterpret_cast<const float16_t*>(wg + legacy_scales_at<kBlock>(b));
        int32x4_t bias[P];
        float32x4_t da[P];
        for (int p = 0; p < P; ++p) {
            const std::int64_t t0 = b * n_tok + 2 * p, t1 = 2 * p + 1 < T ? t0 + 1 : t0;
            bias[p] = pair_lanes(ab[t0], ab[t1]);
            da[p] = pair_lanes(ad[t0], ad[t1]);
        }
        for (int i = 0; i < 4; ++i) {
            uint8x16_t w[4][2];
            quad_operands<Q4>(q, i, w);
            const float32x4_t dw = vcvt_f32_f16(vld1_f16(scales + 4 * i));
            const float32x4_t dlo = vzip1q_f32(dw, dw), dhi = vzip2q_f32(dw, dw);
            for (int p = 0; p < P; ++p) {
                int8x16_t x[4];
                pair_operands(a + (b * n_tok + 2 * p) * kQK, 2 * p + 1 < T, x);
                int32x4_t slo = bias[p], shi = bias[p];
                for (int c = 0; c < 4; ++c) {
                    slo = mmla<Q4>(slo, w[c][0], x[c]);
                    shi = mmla<Q4>(shi, w[c][1], x[c]);
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
            vst1q_f32(yt + 4 * i, token_rows(acc[t / 2][i], t));
        }
        if (rows < kPackRows) {
            for (std::int64_t r = 0; r < rows; ++r) y[t * ldy + r] = out[r];
        }
    }
}

template <bool Q4>
void gemm(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
          std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* ab,
          std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
    packed_tiles<kMaxT, kQK, 1>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, ab, n_tok, y, ldy,
                                packed_neon::kTokenBlock, []<int T>(auto... x) { group_tokens<Q4, T>(x...); });
}

// Q4_K / Q5_K: per superblock, the token pairs' operands of its 8 sub-blocks go to the stack
// once; then per row quad, the 4 sub-block pairs (one zip of each quant line and qh line serves
// both: low and high nibble) add sc_j * dot_j into the quad's isum in 2 x 2 order, and the quad's
// float step (Sdot::step_q45k) runs per token on its transposed sums. The accumulators stay in
// memory, touched once per quad and superblock; in registers they left too few for the tiles.
template <bool Q5, int T>
[[gnu::noinline]] void group_tokens_q45k(std::int64_t nsb, const std::uint8_t* wg, const std::int8_t* a,
                                         const float* ad, const std::int32_t* abs, std::int64_t n_tok, float* y,
                                         std::int64_t ldy, std::int64_t rows) {
    constexpr int P = (T + 1) / 2;
    constexpr std::size_t kQh = Q5 ? 512 : 0;
    float acc[T][kPackRows] = {};
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* qh = wg + static_cast<std::size_t>(sb) * (kPackQ4KBytes + kQh);
        const std::uint8_t* o = qh + kQh;
        const std::int8_t* as = a + sb * n_tok * 256;
        int8x16_t x[8][P][4];  // [sub-block][pair][values 8c..8c+7 of both tokens]
        for (int j = 0; j < 8; ++j) {
            for (int p = 0; p < P; ++p) {
                const int t1 = 2 * p + 1 < T ? 2 * p + 1 : 2 * p;  // an odd count's last token pairs with itself
                const int8x16x2_t u = vld1q_s8_x2(as + 2 * p * 256 + 32 * j);
                const int8x16x2_t v = vld1q_s8_x2(as + t1 * 256 + 32 * j);
                for (int h = 0; h < 2; ++h) {
                    const int64x2_t u64 = vreinterpretq_s64_s8(u.val[h]), v64 = vreinterpretq_s64_s8(v.val[h]);
                    x[j][p][2 * h] = vreinterpretq_s8_s64(vzip1q_s64(u64, v64));
                    x[j][p][2 * h + 1] = vreinterpretq_s8_s64(vzip2q_s64(u64, v64));
                }
            }
        }
        for (int i = 0; i < 4; ++i) {
            int32x4_t isum[P][2];
            for (int p = 0; p < P; ++p) isum[p][0] = isum[p][1] = vdupq_n_s32(0);
            for (int k = 0; k < 4; ++k) {
                uint8x16_t z[4][2], zh[4][2];
                zip_lines<4>(o + 512 * k, i, z);
                if constexpr (Q5) zip_lines<4>(qh, i, zh);
                for (int e = 0; e < 2; ++e) {  // sub-block j = 2k + e: low nibble, then high
                    const int j = 2 * k + e;
                    const int8x16_t shift = vdupq_n_s8(static_cast<std::int8_t>(e == 0 ? -j : 4 - j));
                    uint8x16_t w[4][2];
                    for (int g = 0; g < 4; ++g) {
                        for (int h = 0; h < 2; ++h) {
                            const uint8x16_t hs = Q5 ? vshlq_u8(zh[g][h], shift) : z[g][h];
                            w[g][h] = vreinterpretq_u8_s8(e == 0 ? Sdot::unpack_q45k<Q5, 0>(z[g][h], hs)
                                                                 : Sdot::unpack_q45k<Q5, 1>(z[g][h], hs));
                        }
                    }
                    const int32x4_t sc = packed_neon::widen_u8(o + 2048 + 16 * j, i);
                    const int32x4_t sch[2] = {vzip1q_s32(sc, sc), vzip2q_s32(sc, sc)};
                    for (int p = 0; p < P; ++p) {
                        for (int h = 0; h < 2; ++h) {
                            int32x4_t s = vdupq_n_s32(0);
                            for (int g = 0; g < 4; ++g) s = vmmlaq_s32(s, vreinterpretq_s8_u8(w[g][h]), x[j][p][g]);
                            isum[p][h] = vmlaq_s32(isum[p][h], sch[h], s);
                        }
                    }
                }
            }
            for (int t = 0; t < T; ++t) {
                const int32x4_t it = token_rows(isum[t / 2], t);
                const float32x4_t prev = vld1q_f32(acc[t] + 4 * i);
                vst1q_f32(acc[t] + 4 * i, Sdot::step_q45k(prev, it, o, abs + (sb * n_tok + t) * 4, ad[sb * n_tok + t], i));
            }
        }
    }
    store_acc<T>(acc, y, ldy, rows);
}

template <bool Q5>
void gemm_q45k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
               std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abs,
               std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
    packed_tiles<kMaxT, 256, 4>(nsb, w, group_bytes, n_groups, n_valid_rows, a, ad, abs, n_tok, y, ldy,
                                packed_neon::kTokenBlock, []<int T>(auto... x) { group_tokens_q45k<Q5, T>(x...); });
}

// Q6_K: as Q4_K, per superblock the token pairs' operands and biases of its 16 sub-blocks go to
// the stack once. Sub-blocks J and J + 4 (J % 8 < 4) are the low and high nibbles of the same ql
// lines with their two bits in the same qh lines (J + 4's four higher), so per row quad one zip
// of each of those lines serves both; a sub-block's 16 values are 2 smmla per row pair and token
// pair, started at the bias, then times the zipped int8 scales into isum.
template <int T>
[[gnu::noinline]] void group_tokens_q6k(std::int64_t nsb, const std::uint8_t* wg, const std::int8_t* a,
                                        const float* ad, const std::int32_t* abias, std::int64_t n_tok, float* y,
                                        std::int64_t ldy, std::int64_t rows) {
    constexpr int P = (T + 1) / 2;
    float acc[T][kPackRows] = {};
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* o = wg + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::int8_t* as = a + sb * n_tok * 256;
        const std::int32_t* bs = abias + sb * n_tok * 16;
        int8x16_t x[16][P][2];  // [sub-block][pair][values 8c..8c+7 of both tokens]
        int32x4_t bias[16][P];
        for (int j = 0; j < 16; ++j) {
            for (int p = 0; p < P; ++p) {
                const int t1 = 2 * p + 1 < T ? 2 * p + 1 : 2 * p;
                const int64x2_t u = vreinterpretq_s64_s8(vld1q_s8(as + 2 * p * 256 + 16 * j));
                const int64x2_t v = vreinterpretq_s64_s8(vld1q_s8(as + t1 * 256 + 16 * j));
                x[j][p][0] = vreinterpretq_s8_s64(vzip1q_s64(u, v));
                x[j][p][1] = vreinterpretq_s8_s64(vzip2q_s64(u, v));
                bias[j][p] = pair_lanes(bs[2 * p * 16 + j], bs[t1 * 16 + j]);
            }
        }
        for (int i = 0; i < 4; ++i) {
            int32x4_t isum[P][2];
            for (int p = 0; p < P; ++p) isum[p][0] = isum[p][1] = vdupq_n_s32(0);
#pragma GCC unroll 8
            for (int jj = 0; jj < 8; ++jj) {
                const int J = jj < 4 ? jj : jj + 4, h = J / 8, k0 = 4 * (J % 8);  // chunks k0..k0+3 of half h
                uint8x16_t ql[2][2], qh[2][2];
                zip_lines<2>(o + (16 * h + k0) * 64, i, ql);
                zip_lines<2>(o + (32 + 8 * h + k0 % 8) * 64, i, qh);
                const int8x16_t shift = vdupq_n_s8(static_cast<std::int8_t>(-2 * (k0 / 8)));
                for (int e = 0; e < 2; ++e) {  // sub-block J (low nibbles), then J + 4 (high)
                    const int j = J + 4 * e;
                    uint8x16_t w[2][2];
                    for (int g = 0; g < 2; ++g) {
                        for (int r = 0; r < 2; ++r) {
                            const uint8x16_t bits = vshlq_u8(qh[g][r], shift);  // J's bits at 0..1, J + 4's at 4..5
                            w[g][r] = e == 0 ? vsliq_n_u8(ql[g][r], vandq_u8(bits, vdupq_n_u8(0x03)), 4)
                                             : vsriq_n_u8(vandq_u8(bits, vdupq_n_u8(0x30)), ql[g][r], 4);
                        }
                    }
                    const int32x4_t sc = packed_neon::widen_s8(o + 3072 + 16 * j, i);
                    const int32x4_t sch[2] = {vzip1q_s32(sc, sc), vzip2q_s32(sc, sc)};
                    for (int p = 0; p < P; ++p) {
                        for (int r = 0; r < 2; ++r) {
                            int32x4_t s = bias[j][p];
                            for (int g = 0; g < 2; ++g) s = vmmlaq_s32(s, vreinterpretq_s8_u8(w[g][r]), x[j][p][g]);
                            isum[p][r] = vmlaq_s32(isum[p][r], sch[r], s);
                        }
                    }
                }
            }
            const auto* dh = reinterpret_cast<const float16_t*>(o + 3072 + 256);
            for (int t = 0; t < T; ++t) {
                const int32x4_t it = token_rows(isum[t / 2], t);
                const float32x4_t d = vmulq_n_f32(vcvt_f32_f16(vld1_f16(dh + 4 * i)), ad[sb * n_tok + t]);
                vst1q_f32(acc[t] + 4 * i, vfmaq_f32(vld1q_f32(acc[t] + 4 * i), vcvtq_f32_s32(it), d));
            }
        }
    }
    store_acc<T>(acc, y, ldy, rows);
}

void gemm_q6k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
              std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abias,
              std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
    packed_tiles<kMaxT, 256, 16>(nsb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy,
                                 packed_neon::kTokenBlock, []<int T>(auto... x) { group_tokens_q6k<T>(x...); });
}

}  // namespace packed_i8mm
}  // namespace

namespace neon_i8mm {
// Fewer tokens than a tile (decode): the sdot kernels, compiled in their own unit (instantiated
// here, among these kernels, GCC inlined them differently: Q4_K decode counted 1465 against 965).
#define EMBER_I8MM_PACKED(name, call)                                                                          \
    EMBER_PACKED_GEMM_SIGNATURE(name) {                                                                       \
        if (n_tok < packed_i8mm::kMaxT) {                                                                      \
            neon_dotprod::name(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after); \
        } else {                                                                                               \
            packed_i8mm::call(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after); \
        }                                                                                                      \
    }
EMBER_I8MM_PACKED(packed_gemm_q4_0, gemm<true>)
EMBER_I8MM_PACKED(packed_gemm_q8_0, gemm<false>)
EMBER_I8MM_PACKED(packed_gemm_q4_k, gemm_q45k<false>)
EMBER_I8MM_PACKED(packed_gemm_q5_k, gemm_q45k<true>)
EMBER_I8MM_PACKED(packed_gemm_q6_k, gemm_q6k)
#undef EMBER_I8MM_PACKED
}  // namespace neon_i8mm
}  // namespace ember::kernels

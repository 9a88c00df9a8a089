// ARM64 kernels of the repacked layouts (kernels/packed.hpp), written once over the products of
// one layout chunk (16 rows x 4 values: four 128-bit registers of 4 rows each) with a 4-byte
// group of a token's activations, kept in RowSums:
//   kDotprod (packed_neon_dotprod.cpp, +dotprod): sdot by element (vdotq_laneq_s32) takes the
//     group from a register lane, so a block's 16 row sums land in 4 int32 vectors;
//   ARMv8-A (packed_neon.cpp): the group is broadcast (dup by lane) and smull/smlal add each
//     (row, value) product into int16 lanes for a run of chunks that cannot overflow, which
//     pairwise adds (saddlp, addp) then fold into the 4 row vectors.
// Either way no horizontal add per row, and a block's 16 fp16 row scales convert with 4 fcvtl, so
// the float step runs 4 rows a vector (the row kernels take it per row, token and block). K-quant
// sub-block sums take their row scales by vmla. Same exact integer sums and float steps as
// packed_scalar.cpp: results are bit-identical. Kernel code only, internal linkage.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/packed_driver-inl.hpp"
#include "kernels/packed_isa.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels {
namespace {
namespace packed_neon {

constexpr std::int64_t kTokenBlock = 64;  // tokens whose activations stay in L2 while groups pass

/// One token's 16 row sums over a sequence of chunk products, from a start value per row.
/// add<L, C>(w, a): the C-th chunk of the sequence, rows' 4 values in w[0..3] times lane L (a
/// 4-byte group) of activation register a. The sequence's length is a multiple of kRun.
template <bool kDotprod, int kRun>
struct RowSums;

#if defined(__ARM_FEATURE_DOTPROD)
template <int kRun>
struct RowSums<true, kRun> {
    int32x4_t s[4];  // rows 4i .. 4i + 3

    [[gnu::always_inline]] void start(int32x4_t init) {
        for (int i = 0; i < 4; ++i) s[i] = init;
    }
    template <int L, int C>
    [[gnu::always_inline]] void add(const int8x16_t* w, int8x16_t a) {
        for (int i = 0; i < 4; ++i) s[i] = vdotq_laneq_s32(s[i], w[i], a, L);
    }
    [[gnu::always_inline]] int32x4_t rows(int i) const { return s[i]; }
};
#endif

/// ARMv8-A: kRun products per int16 lane (lane: row pair, value), so |w| * 127 * kRun <= 32767,
/// then pairwise into int32 (row, value pair) lanes.
template <int kRun>
struct RowSums<false, kRun> {
    int32x4_t init;
    int16x8_t p[8];  // rows 2k, 2k + 1, 4 values each: products of the current run
    int32x4_t q[8];  // rows 2k, 2k + 1, 2 value pairs each: the runs before

    [[gnu::always_inline]] void start(int32x4_t v) { init = v; }
    template <int L, int C>
    [[gnu::always_inline]] void add(const int8x16_t* w, int8x16_t a) {
        const int8x16_t x = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(a), L));
        for (int i = 0; i < 4; ++i) {
            if constexpr (C % kRun == 0) {
                p[2 * i] = vmull_s8(vget_low_s8(w[i]), vget_low_s8(x));
                p[2 * i + 1] = vmull_high_s8(w[i], x);
            } else {
                p[2 * i] = vmlal_s8(p[2 * i], vget_low_s8(w[i]), vget_low_s8(x));
                p[2 * i + 1] = vmlal_high_s8(p[2 * i + 1], w[i], x);
            }
        }
        if constexpr (C % kRun == kRun - 1) {
            for (int k = 0; k < 8; ++k) q[k] = C < kRun ? vpaddlq_s16(p[k]) : vpadalq_s16(q[k], p[k]);
        }
    }
    [[gnu::always_inline]] int32x4_t rows(int i) const { return vaddq_s32(init, vpaddq_s32(q[2 * i], q[2 * i + 1])); }
};

// Stores T tokens' 16 row outputs (4 vectors each) for the group's `rows` valid rows.
template <int T>
inline void store_rows(const float32x4_t (*acc)[4], float* y, std::int64_t ldy, std::int64_t rows) {
    for (int t = 0; t < T; ++t) {
        float* yt = y + t * ldy;
        if (rows == kPackRows) {
            for (int i = 0; i < 4; ++i) vst1q_f32(yt + 4 * i, acc[t][i]);
        } else {
            float out[kPackRows];
            for (int i = 0; i < 4; ++i) vst1q_f32(out + 4 * i, acc[t][i]);
            for (std::int64_t r = 0; r < rows; ++r) yt[r] = out[r];
        }
    }
}

// 4 unsigned bytes (rows 4i..4i+3 of a 16-byte line) widened to int32.
inline int32x4_t widen_u8(const std::uint8_t* p, int i) {
    const uint16x8_t h = vmovl_u8(vld1_u8(p + (i / 2) * 8));
    return vreinterpretq_s32_u32(i % 2 == 0 ? vmovl_u16(vget_low_u16(h)) : vmovl_u16(vget_high_u16(h)));
}

inline int32x4_t widen_s8(const std::uint8_t* p, int i) {
    const int16x8_t h = vmovl_s8(vld1_s8(reinterpret_cast<const std::int8_t*>(p) + (i / 2) * 8));
    return i % 2 == 0 ? vmovl_s16(vget_low_s16(h)) : vmovl_s16(vget_high_s16(h));
}

/// Ends a chunk's loads: GCC otherwise hoists the loads of every chunk of a fully unrolled
/// sequence to its start and spills what they displace (Q5_K decode on dotprod ran 2695
/// instructions a 16-row x 256-value unit with them hoisted, 1735 fenced). Used where qemu's
/// instruction counts showed a gain: fencing Q4_0, Q6_K and ARMv8-A Q8_0 raised them.
[[gnu::always_inline]] inline void chunk_fence() { asm volatile("" ::: "memory"); }

/// The kernels, tokens kMaxT at a time (the sdot sums are 4 registers a token, the int16 runs 8).
template <bool kDotprod>
struct Kernels {
    static constexpr int kMaxT = kDotprod ? 2 : 1;

    // Chunk C of a block and those after it, for T tokens. Q4_0 (C < 4), byte i of lane r: low
    // nibble = value 4C + i, high nibble = value 16 + 4C + i. Q8_0 (C < 8): values 4C..4C+3, + 128.
    template <bool Q4, int T, int C, class S>
    [[gnu::always_inline]] static void block_chunks(S* s, const std::uint8_t* q, const int8x16_t* lo, const int8x16_t* hi) {
        if constexpr (Q4) {
            int8x16_t wl[4], wh[4];
            for (int i = 0; i < 4; ++i) {
                const uint8x16_t x = vld1q_u8(q + 64 * C + 16 * i);
                wl[i] = vreinterpretq_s8_u8(vandq_u8(x, vdupq_n_u8(0x0f)));
                wh[i] = vreinterpretq_s8_u8(vshrq_n_u8(x, 4));
            }
            for (int t = 0; t < T; ++t) {
                s[t].template add<C, 2 * C>(wl, lo[t]);
                s[t].template add<C, 2 * C + 1>(wh, hi[t]);
            }
            if constexpr (C < 3) block_chunks<Q4, T, C + 1>(s, q, lo, hi);
        } else {
            int8x16_t w[4];
            for (int i = 0; i < 4; ++i) w[i] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(q + 64 * C + 16 * i), vdupq_n_u8(0x80)));
            for (int t = 0; t < T; ++t) s[t].template add<C % 4, C>(w, C < 4 ? lo[t] : hi[t]);
            if constexpr (kDotprod) chunk_fence();
            if constexpr (C < 7) block_chunks<Q4, T, C + 1>(s, q, lo, hi);
        }
    }

    // T tokens (t0's activations at a, ad, ab; stride n_tok per block) against one group of
    // `rows` valid rows. Per block: s = bias (Q4_0: -8 * sum(a); Q8_0: the bytes are w + 128,
    // flipped back to signed w by one eor, so no bias) + the integer dot; acc = fma(float(s),
    // dw * da, acc). An int16 lane holds Q4_0's 8 products (15 * 127 each), Q8_0's 2 (128 * 127).
    template <bool Q4, int T>
    static void group_tokens(std::int64_t nb, const std::uint8_t* wg, const std::int8_t* a, const float* ad,
                             const std::int32_t* ab, std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t rows) {
        constexpr std::size_t kBlock = Q4 ? 4 * 64 : 8 * 64;
        float32x4_t acc[T][4];
        for (int t = 0; t < T; ++t)
            for (int i = 0; i < 4; ++i) acc[t][i] = vdupq_n_f32(0.0f);
        for (std::int64_t b = 0; b < nb; ++b) {
            const std::uint8_t* q = wg + legacy_quants_at<kBlock>(b);
            const auto* scales = reinterpret_cast<const float16_t*>(wg + legacy_scales_at<kBlock>(b));
            int8x16_t lo[T], hi[T];  // activation bytes 0..15 and 16..31
            RowSums<kDotprod, Q4 ? 8 : 2> s[T];
            for (int t = 0; t < T; ++t) {
                const std::int8_t* at = a + (b * n_tok + t) * kQK;
                lo[t] = vld1q_s8(at);
                hi[t] = vld1q_s8(at + 16);
                s[t].start(vdupq_n_s32(Q4 ? ab[b * n_tok + t] : 0));
            }
            block_chunks<Q4, T, 0>(s, q, lo, hi);
            for (int i = 0; i < 4; ++i) {
                const float32x4_t dw = vcvt_f32_f16(vld1_f16(scales + 4 * i));
                for (int t = 0; t < T; ++t) {
                    const float32x4_t prod = vmulq_n_f32(dw, ad[b * n_tok + t]);
                    acc[t][i] = vfmaq_f32(acc[t][i], vcvtq_f32_s32(s[t].rows(i)), prod);
                }
            }
        }
        store_rows<T>(acc, y, ldy, rows);
    }

    template <bool Q4>
    static void gemm(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
                     std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* ab,
                     std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
        packed_tiles<kMaxT, kQK, 1>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, ab, n_tok, y, ldy, kTokenBlock,
                                    []<int T>(auto... x) { group_tokens<Q4, T>(x...); });
    }

    // Sub-block 2k + P's values in quant register x: its nibble, with Q5_K's fifth bit from hs
    // (its qh register shifted so that the bit sits at bit 0 for P 0, at bit 4 for P 1).
    template <bool Q5, int P>
    [[gnu::always_inline]] static int8x16_t unpack_q45k(uint8x16_t x, uint8x16_t hs) {
        uint8x16_t q;
        if constexpr (!Q5) {
            q = P == 0 ? vandq_u8(x, vdupq_n_u8(0x0f)) : vshrq_n_u8(x, 4);
        } else {
            q = P == 0 ? vsliq_n_u8(x, vandq_u8(hs, vdupq_n_u8(0x01)), 4) : vsriq_n_u8(vandq_u8(hs, vdupq_n_u8(0x10)), x, 4);
        }
        return vreinterpretq_s8_u8(q);
    }

    // Sub-block 2k + P's 32 dots of a Q4_K (Q5 false) or Q5_K superblock: chunk c, lane r, byte
    // i of pair k holds value 4c + i of sub-block 2k (low nibble, P = 0) and 2k + 1 (high,
    // P = 1); Q5_K's fifth bit is bit 2k + P of the same byte of qh line c, joined by one
    // shift-and-insert. Activation sub-block 2k + P in (lo, hi) registers. An int16 lane holds
    // the sub-block's 8 products (31 * 127 each).
    template <bool Q5, int T, int P, int C, class S>
    [[gnu::always_inline]] static void subblock_q45k(S* s, const std::uint8_t* qh, const std::uint8_t* pair,
                                                     int8x16_t qh_shift, const int8x16_t* lo, const int8x16_t* hi) {
        int8x16_t w[4];
        for (int i = 0; i < 4; ++i) {
            const uint8x16_t x = vld1q_u8(pair + 64 * C + 16 * i);
            uint8x16_t hs = x;
            if constexpr (Q5) hs = vshlq_u8(vld1q_u8(qh + 64 * C + 16 * i), qh_shift);
            w[i] = unpack_q45k<Q5, P>(x, hs);
        }
        for (int t = 0; t < T; ++t) s[t].template add<C % 4, C>(w, C < 4 ? lo[t] : hi[t]);
        chunk_fence();
        if constexpr (C < 7) subblock_q45k<Q5, T, P, C + 1>(s, qh, pair, qh_shift, lo, hi);
    }

    // Sub-block j = 2k + P of a superblock (quants o, Q5_K's qh lines qh) into isum. a: the
    // superblock's first token.
    template <bool Q5, int T, int P>
    static void subblock_sum_q45k(int32x4_t (*isum)[4], const std::uint8_t* qh, const std::uint8_t* o, int k,
                                  const std::int8_t* a) {
        const int j = 2 * k + P;
        int8x16_t lo[T], hi[T];
        RowSums<kDotprod, 8> s[T];
        for (int t = 0; t < T; ++t) {
            lo[t] = vld1q_s8(a + t * 256 + 32 * j);
            hi[t] = vld1q_s8(a + t * 256 + 32 * j + 16);
            s[t].start(vdupq_n_s32(0));
        }
        const int8x16_t qh_shift = vdupq_n_s8(static_cast<std::int8_t>(P == 0 ? -j : 4 - j));
        subblock_q45k<Q5, T, P, 0>(s, qh, o + k * 512, qh_shift, lo, hi);
        for (int i = 0; i < 4; ++i) {
            const int32x4_t sc = widen_u8(o + 2048 + 16 * j, i);
            for (int t = 0; t < T; ++t) isum[t][i] = vmlaq_s32(isum[t][i], sc, s[t].rows(i));
        }
    }

    // Both sub-blocks 2k, 2k + 1 of pair k for one token (sdot sums: 4 registers a sub-block),
    // from one load of each quant line (and Q5_K qh line): the nibbles split as above.
    template <bool Q5, int C>
    [[gnu::always_inline]] static void pair_q45k(RowSums<kDotprod, 8>* s, const std::uint8_t* qh, const std::uint8_t* pair,
                                                 int8x16_t shift0, int8x16_t shift1, const int8x16_t* x) {
        int8x16_t w0[4], w1[4];
        for (int i = 0; i < 4; ++i) {
            const uint8x16_t q = vld1q_u8(pair + 64 * C + 16 * i);
            uint8x16_t h0 = q, h1 = q;
            if constexpr (Q5) {
                const uint8x16_t h = vld1q_u8(qh + 64 * C + 16 * i);
                h0 = vshlq_u8(h, shift0);
                h1 = vshlq_u8(h, shift1);
            }
            w0[i] = unpack_q45k<Q5, 0>(q, h0);
            w1[i] = unpack_q45k<Q5, 1>(q, h1);
        }
        s[0].template add<C % 4, C>(w0, x[C < 4 ? 0 : 1]);
        s[1].template add<C % 4, C>(w1, x[C < 4 ? 2 : 3]);
        chunk_fence();
        if constexpr (C < 7) pair_q45k<Q5, C + 1>(s, qh, pair, shift0, shift1, x);
    }

    // Pair k of a superblock into isum, one token (a: its superblock's activations).
    template <bool Q5>
    static void pair_sum_q45k(int32x4_t (*isum)[4], const std::uint8_t* qh, const std::uint8_t* o, int k,
                              const std::int8_t* a) {
        const int8x16_t x[4] = {vld1q_s8(a + 64 * k), vld1q_s8(a + 64 * k + 16), vld1q_s8(a + 64 * k + 32),
                                vld1q_s8(a + 64 * k + 48)};
        RowSums<kDotprod, 8> s[2];
        s[0].start(vdupq_n_s32(0));
        s[1].start(vdupq_n_s32(0));
        pair_q45k<Q5, 0>(s, qh, o + k * 512, vdupq_n_s8(static_cast<std::int8_t>(-2 * k)),
                         vdupq_n_s8(static_cast<std::int8_t>(4 - (2 * k + 1))), x);
        for (int i = 0; i < 4; ++i) {
            isum[0][i] = vmlaq_s32(isum[0][i], widen_u8(o + 2048 + 32 * k, i), s[0].rows(i));
            isum[0][i] = vmlaq_s32(isum[0][i], widen_u8(o + 2048 + 32 * k + 16, i), s[1].rows(i));
        }
    }

    // One token's float step of a Q4_K/Q5_K superblock (quants, scales... at o) for rows 4i..4i+3:
    // msum = sum_p m_p * bsum_p exactly (the mins [pair p][row r][2] as int16 pairs against the
    // activation's pair sums bs, two int16 in one int32), then acc = fma(isum, d * da, acc),
    // acc = fma(msum, -(dmin * da), acc), as packed_scalar.cpp.
    [[gnu::always_inline]] static float32x4_t step_q45k(float32x4_t acc, int32x4_t isum, const std::uint8_t* o,
                                                        const std::int32_t* bs, float da, int i) {
        int32x4_t m01 = vdupq_n_s32(0), m23 = vdupq_n_s32(0);  // rows 4i, 4i+1 / 4i+2, 4i+3
        for (int p = 0; p < 4; ++p) {
            const int16x8_t m = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(o + 2048 + 128 + 32 * p + 8 * i)));
            const int16x8_t b = vreinterpretq_s16_s32(vdupq_n_s32(bs[p]));
            m01 = vmlal_s16(m01, vget_low_s16(m), vget_low_s16(b));
            m23 = vmlal_high_s16(m23, m, b);
        }
        const int32x4_t msum = vpaddq_s32(m01, m23);
        const auto* dm = reinterpret_cast<const float16_t*>(o + 2048 + 256);
        const float32x4_t d = vmulq_n_f32(vcvt_f32_f16(vld1_f16(dm + 4 * i)), da);
        const float32x4_t dmin = vnegq_f32(vmulq_n_f32(vcvt_f32_f16(vld1_f16(dm + 16 + 4 * i)), da));
        acc = vfmaq_f32(acc, vcvtq_f32_s32(isum), d);
        return vfmaq_f32(acc, vcvtq_f32_s32(msum), dmin);
    }

    // Q4_K / Q5_K (kernels/packed.hpp): per superblock and row, isum = sum_j sc_j * dot_j
    // exactly, then step_q45k.
    template <bool Q5, int T>
    static void group_tokens_q45k(std::int64_t nsb, const std::uint8_t* wg, const std::int8_t* a, const float* ad,
                                  const std::int32_t* abs, std::int64_t n_tok, float* y, std::int64_t ldy,
                                  std::int64_t rows) {
        constexpr std::size_t kQh = Q5 ? 512 : 0;
        float32x4_t acc[T][4];
        for (int t = 0; t < T; ++t)
            for (int i = 0; i < 4; ++i) acc[t][i] = vdupq_n_f32(0.0f);
        for (std::int64_t sb = 0; sb < nsb; ++sb) {
            const std::uint8_t* qh = wg + static_cast<std::size_t>(sb) * (kPackQ4KBytes + kQh);
            const std::uint8_t* o = qh + kQh;
            int32x4_t isum[T][4];
            for (int t = 0; t < T; ++t)
                for (int i = 0; i < 4; ++i) isum[t][i] = vdupq_n_s32(0);
            for (int k = 0; k < 4; ++k) {
                if constexpr (kDotprod && T == 1) {  // the int16 runs (ARMv8-A) of two sub-blocks spill
                    pair_sum_q45k<Q5>(isum, qh, o, k, a + sb * n_tok * 256);
                } else {
                    subblock_sum_q45k<Q5, T, 0>(isum, qh, o, k, a + sb * n_tok * 256);
                    subblock_sum_q45k<Q5, T, 1>(isum, qh, o, k, a + sb * n_tok * 256);
                }
            }
            for (int t = 0; t < T; ++t) {
                const float da = ad[sb * n_tok + t];
                for (int i = 0; i < 4; ++i) acc[t][i] = step_q45k(acc[t][i], isum[t][i], o, abs + (sb * n_tok + t) * 4, da, i);
            }
        }
        store_rows<T>(acc, y, ldy, rows);
    }

    template <bool Q5>
    static void gemm_q45k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
                          std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abs,
                          std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
        packed_tiles<kMaxT, 256, 4>(nsb, w, group_bytes, n_groups, n_valid_rows, a, ad, abs, n_tok, y, ldy, kTokenBlock,
                                    []<int T>(auto... x) { group_tokens_q45k<Q5, T>(x...); });
    }

    // Q6_K (kernels/packed.hpp): sub-block J (16 values) of half h = J / 8 takes chunks k = 4
    // (J % 8) .. + 3: the nibble (k >= 16 ? high : low) of ql line 16h + k % 16 and bits 2 (k / 8)
    // of qh line 32 + 8h + k % 8 above it, joined by one shift-and-insert (sli for a low nibble,
    // sri for a high one). Per row isum = sum_j sc_j * (bias_j + dot_j), acc = fma(isum, d * da,
    // acc). An int16 lane holds the sub-block's 4 products (63 * 127 each).
    template <int T, int J, int C, class S>
    [[gnu::always_inline]] static void subblock_q6k(S* s, const std::uint8_t* o, const int8x16_t* x) {
        constexpr int h = J / 8, k = 4 * (J % 8) + C, shift = 2 * (k / 8);
        int8x16_t w[4];
        for (int i = 0; i < 4; ++i) {
            const uint8x16_t ql = vld1q_u8(o + (16 * h + k % 16) * 64 + 16 * i);
            const uint8x16_t qh = vld1q_u8(o + (32 + 8 * h + k % 8) * 64 + 16 * i);
            uint8x16_t q;
            if constexpr (k < 16) {  // (ql & 0x0f) | bits << 4: the 2 bits moved to the bottom, inserted
                uint8x16_t low2 = qh;
                if constexpr (shift > 0) low2 = vshrq_n_u8(qh, shift);
                q = vsliq_n_u8(ql, vandq_u8(low2, vdupq_n_u8(0x03)), 4);
            } else {  // bits at 4..5 | ql >> 4: the 2 bits moved to bit 4, ql's high nibble inserted
                uint8x16_t up = qh;
                if constexpr (shift < 4) up = vshlq_n_u8(qh, 4 - shift);
                if constexpr (shift > 4) up = vshrq_n_u8(qh, shift - 4);
                q = vsriq_n_u8(vandq_u8(up, vdupq_n_u8(0x30)), ql, 4);
            }
            w[i] = vreinterpretq_s8_u8(q);
        }
        for (int t = 0; t < T; ++t) s[t].template add<C, C>(w, x[t]);
        if constexpr (C < 3) subblock_q6k<T, J, C + 1>(s, o, x);
    }

    // Sub-block J of superblock o into isum, then J + 1 .. 15. a, bias: the superblock's first
    // token. Not inlined into each other: the int16 runs' registers spilled across sub-blocks.
    template <int T, int J>
    [[gnu::noinline]] static void subblocks_q6k(int32x4_t (*isum)[4], const std::uint8_t* o, const std::int8_t* a, const std::int32_t* bias) {
        int8x16_t x[T];
        RowSums<kDotprod, 4> s[T];
        for (int t = 0; t < T; ++t) {
            x[t] = vld1q_s8(a + t * 256 + 16 * J);
            s[t].start(vdupq_n_s32(bias[t * 16 + J]));
        }
        subblock_q6k<T, J, 0>(s, o, x);
        for (int i = 0; i < 4; ++i) {
            const int32x4_t sc = widen_s8(o + 3072 + 16 * J, i);
            for (int t = 0; t < T; ++t) isum[t][i] = vmlaq_s32(isum[t][i], sc, s[t].rows(i));
        }
        if constexpr (J < 15) subblocks_q6k<T, J + 1>(isum, o, a, bias);
    }

    // Sub-blocks J and J + 4 (J % 8 < 4) for one token: chunk C of J is the low nibble of the
    // ql line whose high nibble is chunk C of J + 4, with the two bits of each in the same qh
    // line (J + 4's four higher), so one load of each line serves both.
    template <int J, int C>
    [[gnu::always_inline]] static void pair_q6k(RowSums<kDotprod, 4>* s, const std::uint8_t* o, const int8x16_t* x) {
        constexpr int h = J / 8, k = 4 * (J % 8) + C, shift = 2 * (k / 8);
        static_assert(k < 16);
        int8x16_t w0[4], w1[4];
        for (int i = 0; i < 4; ++i) {
            const uint8x16_t ql = vld1q_u8(o + (16 * h + k) * 64 + 16 * i);
            const uint8x16_t qh = vld1q_u8(o + (32 + 8 * h + k % 8) * 64 + 16 * i);
            uint8x16_t low2 = qh, up = qh;  // J's bits to the bottom, J + 4's (at shift + 4) to bit 4
            if constexpr (shift > 0) {
                low2 = vshrq_n_u8(qh, shift);
                up = low2;
            }
            w0[i] = vreinterpretq_s8_u8(vsliq_n_u8(ql, vandq_u8(low2, vdupq_n_u8(0x03)), 4));
            w1[i] = vreinterpretq_s8_u8(vsriq_n_u8(vandq_u8(up, vdupq_n_u8(0x30)), ql, 4));
        }
        s[0].template add<C, C>(w0, x[0]);
        s[1].template add<C, C>(w1, x[1]);
        if constexpr (C < 3) pair_q6k<J, C + 1>(s, o, x);
    }

    // Sub-blocks J and J + 4 of superblock o into isum (one token), then the next pair.
    template <int J>
    [[gnu::noinline]] static void pairs_q6k(int32x4_t (*isum)[4], const std::uint8_t* o, const std::int8_t* a, const std::int32_t* bias) {
        const int8x16_t x[2] = {vld1q_s8(a + 16 * J), vld1q_s8(a + 16 * (J + 4))};
        RowSums<kDotprod, 4> s[2];
        s[0].start(vdupq_n_s32(bias[J]));
        s[1].start(vdupq_n_s32(bias[J + 4]));
        pair_q6k<J, 0>(s, o, x);
        for (int i = 0; i < 4; ++i) {
            isum[0][i] = vmlaq_s32(isum[0][i], widen_s8(o + 3072 + 16 * J, i), s[0].rows(i));
            isum[0][i] = vmlaq_s32(isum[0][i], widen_s8(o + 3072 + 16 * (J + 4), i), s[1].rows(i));
        }
        if constexpr (J == 3) {
            pairs_q6k<8>(isum, o, a, bias);
        } else if constexpr (J < 11) {
            pairs_q6k<J + 1>(isum, o, a, bias);
        }
    }

    template <int T>
    static void group_tokens_q6k(std::int64_t nsb, const std::uint8_t* wg, const std::int8_t* a, const float* ad,
                                 const std::int32_t* abias, std::int64_t n_tok, float* y, std::int64_t ldy,
                                 std::int64_t rows) {
        float32x4_t acc[T][4];
        for (int t = 0; t < T; ++t)
            for (int i = 0; i < 4; ++i) acc[t][i] = vdupq_n_f32(0.0f);
        for (std::int64_t sb = 0; sb < nsb; ++sb) {
            const std::uint8_t* o = wg + static_cast<std::size_t>(sb) * kPackQ6KBytes;
            int32x4_t isum[T][4];
            for (int t = 0; t < T; ++t)
                for (int i = 0; i < 4; ++i) isum[t][i] = vdupq_n_s32(0);
            if constexpr (kDotprod && T == 1) {  // two ARMv8-A int16 runs would spill
                pairs_q6k<0>(isum, o, a + sb * n_tok * 256, abias + sb * n_tok * 16);
            } else {
                subblocks_q6k<T, 0>(isum, o, a + sb * n_tok * 256, abias + sb * n_tok * 16);
            }
            const auto* dh = reinterpret_cast<const float16_t*>(o + 3072 + 256);
            for (int t = 0; t < T; ++t) {
                const float da = ad[sb * n_tok + t];
                for (int i = 0; i < 4; ++i) {
                    const float32x4_t d = vmulq_n_f32(vcvt_f32_f16(vld1_f16(dh + 4 * i)), da);
                    acc[t][i] = vfmaq_f32(acc[t][i], vcvtq_f32_s32(isum[t][i]), d);
                }
            }
        }
        store_rows<T>(acc, y, ldy, rows);
    }

    static void gemm_q6k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
                         std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abias,
                         std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
        packed_tiles<kMaxT, 256, 16>(nsb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, kTokenBlock,
                                     []<int T>(auto... x) { group_tokens_q6k<T>(x...); });
    }

    /// The GEMMs, named as EMBER_DEFINE_PACKED (isa_kernels.hpp) takes them.
    template <bool Q4>
    static constexpr auto legacy = gemm<Q4>;
    template <bool Q5>
    static constexpr auto q45k = gemm_q45k<Q5>;
    static constexpr auto q6k = gemm_q6k;
};

}  // namespace packed_neon
}  // namespace
}  // namespace ember::kernels

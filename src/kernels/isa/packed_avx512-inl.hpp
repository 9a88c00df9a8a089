// AVX-512 VNNI kernels of the repacked 16-row K-quant layouts (kernels/packed.hpp), shared by
// packed_avx512.cpp (kGfni = false) and packed_avx512_gfni.cpp (built with -mgfni, kGfni = true:
// decode joins Q5_K's fifth and Q6_K's high bits to their nibbles with gf2p8affineqb, which moves
// any bit of a byte to any other and clears the rest in one op). Kernel code only, internal
// linkage. Bit-identical to the scalar twin (packed_scalar.cpp).
#pragma once
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/packed_driver-inl.hpp"
#include "kernels/isa/x86_common-inl.hpp"
#include "kernels/packed_isa.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels {
namespace {
namespace packed_avx512 {

inline __m512i bcast4(const std::uint8_t* p) {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

inline __mmask16 row_mask(std::int64_t rows) {
    return rows >= kPackRows ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << rows) - 1u);
}

/// gf2p8affineqb's matrix that moves bits from .. from + n - 1 of each byte to bits to .. to + n - 1
/// and clears the others (result bit i is the parity of byte 7 - i of the matrix AND the source).
constexpr long long bit_matrix(int from, int to, int n) {
    unsigned long long m = 0;
    for (int i = 0; i < n; ++i) m |= (1ull << (from + i)) << (8 * (7 - (to + i)));
    return static_cast<long long>(m);
}
inline __m512i bits_to(int from, int to, int n) { return _mm512_set1_epi64(bit_matrix(from, to, n)); }

/// Bytes of `a` where `mask` is set, of `b` elsewhere.
inline __m512i select_bits(__m512i a, __m512i b, __m512i mask) { return _mm512_ternarylogic_epi32(a, b, mask, 0xE4); }

/// Q5_K's two 5-bit values of each byte of x, a line of nibble pairs, with their fifth bits
/// from h: bit `bit` of each byte for the low value, `bit + 1` for the high one. One
/// gf2p8affineqb puts the first at bit 4 and the second at bit 0; the low value is x's low
/// nibble over that, and the high value's byte, x's high nibble over its bit at 0, is rotated
/// by four with a second one. 4 ops where shifting the high nibble down and moving each bit on
/// its own took 5: one thread in L2 69 -> 103 GB/s. Q6_K's chunks (two bits a value) done this
/// way measured slower.
inline void q5k_values(__m512i x, __m512i h, int bit, __m512i low, __m512i& lo, __m512i& hi) {
    const __m512i bits = _mm512_gf2p8affine_epi64_epi8(h, _mm512_set1_epi64(bit_matrix(bit, 4, 1) | bit_matrix(bit + 1, 0, 1)), 0);
    lo = select_bits(x, bits, low);
    hi = _mm512_gf2p8affine_epi64_epi8(select_bits(bits, x, low), _mm512_set1_epi64(bit_matrix(4, 0, 4) | bit_matrix(0, 4, 1)), 0);
}

// Q4_K and Q5_K: 8 vpdpbusd per token and sub-block give the 16 rows' integer dots, scaled by
// the rows' 6-bit scales (vpmulld) into the superblock sum; the mins take 4 vpdpwssd against
// the activation's sub-block sums. Q5_K's fifth bit joins each nibble in q5k_values (GFNI) or
// by a masked add (plain AVX-512).

/// The K-quants' decode loop: groups two at a time (two weight streams), first the pairs of
/// spread_group_calls, then neighbours, then a lone last group: f.operator()<G>(first group,
/// step to the call's second group, row mask of the call's last group, groups after the call up
/// to G, counting the n_after that follow the n_groups). The spread pairs, against neighbours in
/// the same build, TinyLlama decode on 2 threads (old/new/new/old runs, 6 each): Q4_K_M +4.7%,
/// Q5_K_M +7.3%, Q6_K +3.1%, all 6 won; one thread Q4_K_M +10%, Q6_K +2%. The kernels are kept
/// out of line so that both kinds of call run the same code: inlined at each call, GCC compiled
/// each copy differently, and a copy's schedule moved the plain AVX-512 Q6_K decode by up to 20%.
template <typename F>
inline void one_token_pairs(std::int64_t n_groups, std::int64_t n_valid_rows, std::int64_t n_after, F&& f) {
    std::int64_t g = spread_group_calls<2>(n_groups, n_valid_rows, [&](std::int64_t c, std::int64_t q) {
        f.template operator()<2>(c, q, row_mask(kPackRows), 0);
    });
    for (; g + 2 <= n_groups; g += 2) {
        f.template operator()<2>(g, 1, row_mask(n_valid_rows - (g + 1) * kPackRows), groups_after(n_groups + n_after, g + 2, 2));
    }
    if (g < n_groups) f.template operator()<1>(g, 1, row_mask(n_valid_rows - g * kPackRows), groups_after(n_groups + n_after, g + 1, 1));
}

/// Superblock sb of G groups (`group_bytes` apart from wg0): qh[g], its kQh bytes of qh lines
/// (Q5_K), and o[g], the Q4_K layout after them.
template <int G, std::size_t kQh>
inline void q45k_superblocks(const std::uint8_t* wg0, std::size_t group_bytes, std::int64_t sb, const std::uint8_t** qh,
                             const std::uint8_t** o) {
    for (int g = 0; g < G; ++g) {
        qh[g] = wg0 + g * group_bytes + static_cast<std::size_t>(sb) * (kPackQ4KBytes + kQh);
        o[g] = qh[g] + kQh;
    }
}

// Decode (one token) of Q4_K/Q5_K, G row groups at a time: sub-blocks 2k and 2k + 1 are the low
// and high nibbles of the same 8 lines, so each line is loaded once (and Q5_K's qh line once) for
// both, into four vpdpbusd chains per group. A per-token path that reloaded every line for the
// second nibble ran at half this speed in cache (Q4_K ~200 -> ~95 cycles a superblock). Two
// groups share each broadcast activation chunk and give the core two weight streams (with the
// next call's groups prefetched, GroupStreams): TinyLlama-shaped matvecs on an Intel Xeon VM
// +4-8% at one thread and +7-8% at two over one group; four groups measured even in memory
// and slower in L2. Q4_K's high nibbles stay in place (16x; their sums, at most 4 x 63 x 32 x
// 240 x 128 a superblock, are divided by 16 exactly), as in the Q4_0 kernel. Same integer sums,
// same float steps as groups_tokens_q45k<Q5, G, 1>: identical results.
template <bool Q5, int G, bool kGfni>
[[gnu::noinline]] void one_token_q45k(std::int64_t nsb, const std::uint8_t* wg0, std::size_t group_bytes,
                                      const std::int8_t* a, const float* ad, const std::int32_t* abs, float* y,
                                      std::int64_t y_step, __mmask16 mask_last, int n_next) {
    constexpr std::size_t kQh = Q5 ? 512 : 0;
    constexpr std::size_t kSuper = kPackQ4KBytes + kQh;
    const GroupStreams<G> streams(wg0, group_bytes, static_cast<std::size_t>(nsb) * kSuper, n_next);
    const __m512i low = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
    __m512 acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* qh[G];
        const std::uint8_t* o[G];
        q45k_superblocks<G, kQh>(wg0, group_bytes, sb, qh, o);
        const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(a + sb * 256);
        __m512i isum_lo[G], isum_hi[G];
        for (int g = 0; g < G; ++g) isum_lo[g] = isum_hi[g] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {  // sub-blocks j = 2k (low nibbles) and 2k + 1 (high)
            __m512i s_lo[G], s2_lo[G], s_hi[G], s2_hi[G];
            for (int g = 0; g < G; ++g) s_lo[g] = s2_lo[g] = s_hi[g] = s2_hi[g] = _mm512_setzero_si512();
#pragma GCC unroll 8
            for (int c = 0; c < 8; ++c) {
                streams.template ahead_step<kSuper, 32>(static_cast<std::size_t>(sb) * kSuper, 8 * k + c);
                const std::uint8_t* x_lo = at + 64 * k + 4 * c;  // sub-block 2k, chunk c
                const __m512i xl = bcast4(x_lo), xh = bcast4(x_lo + 32);
                for (int g = 0; g < G; ++g) {
                    const __m512i x = in_register(_mm512_loadu_si512(o[g] + k * 512 + 64 * c));
                    __m512i lo, hi;
                    if constexpr (Q5 && kGfni) {
                        q5k_values(x, in_register(_mm512_loadu_si512(qh[g] + 64 * c)), 2 * k, low, lo, hi);
                    } else {
                        // Q4_K keeps the high nibbles in place (16x their value): one op, not two.
                        lo = _mm512_and_si512(x, low);
                        hi = Q5 ? _mm512_and_si512(_mm512_srli_epi16(x, 4), low) : _mm512_andnot_si512(low, x);
                        if constexpr (Q5) {  // +16 where bit 2k (2k + 1) of the qh line is set
                            const __m512i h = in_register(_mm512_loadu_si512(qh[g] + 64 * c));
                            lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(h, _mm512_set1_epi8(static_cast<char>(1 << (2 * k)))), lo, bit4);
                            hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(h, _mm512_set1_epi8(static_cast<char>(2 << (2 * k)))), hi, bit4);
                        }
                    }
                    if (c < 4) {
                        s_lo[g] = _mm512_dpbusd_epi32(s_lo[g], lo, xl);
                        s_hi[g] = _mm512_dpbusd_epi32(s_hi[g], hi, xh);
                    } else {
                        s2_lo[g] = _mm512_dpbusd_epi32(s2_lo[g], lo, xl);
                        s2_hi[g] = _mm512_dpbusd_epi32(s2_hi[g], hi, xh);
                    }
                }
            }
            for (int g = 0; g < G; ++g) {
                const auto* sc = reinterpret_cast<const __m128i*>(o[g] + 2048 + 32 * k);
                isum_lo[g] = _mm512_add_epi32(isum_lo[g], _mm512_mullo_epi32(_mm512_add_epi32(s_lo[g], s2_lo[g]), _mm512_cvtepu8_epi32(_mm_loadu_si128(sc))));
                isum_hi[g] = _mm512_add_epi32(isum_hi[g], _mm512_mullo_epi32(_mm512_add_epi32(s_hi[g], s2_hi[g]), _mm512_cvtepu8_epi32(_mm_loadu_si128(sc + 1))));
            }
        }
        const __m512 da = _mm512_set1_ps(ad[sb]);
        for (int g = 0; g < G; ++g) {
            const __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o[g] + 2048 + 256)));
            const __m512 mv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o[g] + 2048 + 256 + 32)));
            __m512i msum = _mm512_setzero_si512();
            for (int p = 0; p < 4; ++p) {
                const __m512i mins = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o[g] + 2048 + 128 + 32 * p)));
                msum = _mm512_dpwssd_epi32(msum, mins, _mm512_set1_epi32(abs[sb * 4 + p]));
            }
            const __m512i hi = Q5 ? isum_hi[g] : _mm512_srai_epi32(isum_hi[g], 4);
            acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(isum_lo[g], hi)), _mm512_mul_ps(dv, da), acc[g]);
            acc[g] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(mv, da), acc[g]);
        }
    }
    for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + g * y_step, acc[g]);
    _mm512_mask_storeu_ps(y + (G - 1) * y_step, mask_last, acc[G - 1]);
}

// Prefill and small batches of Q4_K/Q5_K: T tokens on G row groups, lines unpacked once for
// both nibbles (as one_token_q45k) and each broadcast activation chunk shared by the G groups.
// Per (row, token) the sub-block sums, times their scales, add up to the same integers as the
// scalar twin's (exact in any order), then the same float steps: identical results. `stream`:
// the call prefetches ahead (the first token tile over these groups; later ones hit cache). One
// group (batches of 4-8 tokens, and every batch of Q5_K with GFNI) prefetches 8 KiB on, not 4:
// TinyLlama, 2 threads, `--parallel 4/6/8` Q4_K_M +11/+9/+10%, Q5_K_M +13/-1/+9% (two groups
// at 8 KiB each: x2 -8.5%).
template <bool Q5, int G, int T, bool kGfni>
inline void groups_tokens_q45k(std::int64_t nsb, const std::uint8_t* wg0, std::size_t group_bytes, const std::int8_t* a,
                               const float* ad, const std::int32_t* abs, std::int64_t n_tok, float* y, std::int64_t ldy,
                               std::int64_t y_step, __mmask16 mask_last, int n_next, bool stream) {
    constexpr std::size_t kQh = Q5 ? 512 : 0;
    using Prefetch = StreamPrefetch<G, tile_ahead<G>()>;
    Prefetch pf[G];
    for (int g = 0; g < G; ++g) {
        pf[g] = Prefetch::of_group(wg0, group_bytes, g, static_cast<std::size_t>(nsb) * (kPackQ4KBytes + kQh), n_next);
    }
    const __m512i low = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
    __m512 acc[G][T];
    for (int g = 0; g < G; ++g) {
        for (int t = 0; t < T; ++t) acc[g][t] = _mm512_setzero_ps();
    }
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* qh[G];
        const std::uint8_t* o[G];
        q45k_superblocks<G, kQh>(wg0, group_bytes, sb, qh, o);
        const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(a + sb * n_tok * 256);
        __m512i isum[G][T];
        for (int g = 0; g < G; ++g) {
            for (int t = 0; t < T; ++t) isum[g][t] = _mm512_setzero_si512();
        }
        for (int k = 0; k < 4; ++k) {  // sub-blocks j = 2k (low nibbles) and 2k + 1 (high)
            __m512i s_lo[G][T], s_hi[G][T];
            for (int g = 0; g < G; ++g) {
                if (stream) {
                    pf[g].template ahead<512>(o[g] + k * 512);
                    if (k == 3) pf[g].template ahead<kPackQ4KBytes - 2048>(o[g] + 2048);
                    if (Q5 && k == 0) pf[g].template ahead<kQh>(qh[g]);
                }
                for (int t = 0; t < T; ++t) s_lo[g][t] = s_hi[g][t] = _mm512_setzero_si512();
            }
            for (int c = 0; c < 8; ++c) {
                __m512i lo[G], hi[G];
                for (int g = 0; g < G; ++g) {
                    const __m512i x = in_register(_mm512_loadu_si512(o[g] + k * 512 + 64 * c));
                    if constexpr (Q5 && kGfni) {
                        q5k_values(x, in_register(_mm512_loadu_si512(qh[g] + 64 * c)), 2 * k, low, lo[g], hi[g]);
                    } else {
                        lo[g] = _mm512_and_si512(x, low);
                        hi[g] = _mm512_and_si512(_mm512_srli_epi16(x, 4), low);
                        if constexpr (Q5) {  // +16 where bit 2k (2k + 1) of the qh line is set
                            const __m512i h = in_register(_mm512_loadu_si512(qh[g] + 64 * c));
                            lo[g] = _mm512_mask_add_epi8(lo[g], _mm512_test_epi8_mask(h, _mm512_set1_epi8(static_cast<char>(1 << (2 * k)))), lo[g], bit4);
                            hi[g] = _mm512_mask_add_epi8(hi[g], _mm512_test_epi8_mask(h, _mm512_set1_epi8(static_cast<char>(2 << (2 * k)))), hi[g], bit4);
                        }
                    }
                }
                for (int t = 0; t < T; ++t) {
                    const std::uint8_t* x_lo = at + t * 256 + 64 * k + 4 * c;  // sub-block 2k, chunk c
                    const __m512i xl = bcast4(x_lo);
                    for (int g = 0; g < G; ++g) s_lo[g][t] = _mm512_dpbusd_epi32(s_lo[g][t], lo[g], xl);
                    const __m512i xh = bcast4(x_lo + 32);
                    for (int g = 0; g < G; ++g) s_hi[g][t] = _mm512_dpbusd_epi32(s_hi[g][t], hi[g], xh);
                }
            }
            for (int g = 0; g < G; ++g) {
                const auto* sc = reinterpret_cast<const __m128i*>(o[g] + 2048 + 32 * k);
                const __m512i sc_lo = _mm512_cvtepu8_epi32(_mm_loadu_si128(sc)), sc_hi = _mm512_cvtepu8_epi32(_mm_loadu_si128(sc + 1));
                for (int t = 0; t < T; ++t) {
                    isum[g][t] = _mm512_add_epi32(isum[g][t], _mm512_add_epi32(_mm512_mullo_epi32(s_lo[g][t], sc_lo),
                                                                               _mm512_mullo_epi32(s_hi[g][t], sc_hi)));
                }
            }
        }
        for (int g = 0; g < G; ++g) {
            const __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o[g] + 2048 + 256)));
            const __m512 mv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o[g] + 2048 + 256 + 32)));
            __m512i mins[4];
            for (int p = 0; p < 4; ++p) {
                mins[p] = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o[g] + 2048 + 128 + 32 * p)));
            }
            for (int t = 0; t < T; ++t) {
                const std::int32_t* bt = abs + (sb * n_tok + t) * 4;
                __m512i msum = _mm512_setzero_si512();
                for (int p = 0; p < 4; ++p) msum = _mm512_dpwssd_epi32(msum, mins[p], _mm512_set1_epi32(bt[p]));
                const __m512 da = _mm512_set1_ps(ad[sb * n_tok + t]);
                acc[g][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[g][t]), _mm512_mul_ps(dv, da), acc[g][t]);
                acc[g][t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), _mm512_mul_ps(mv, da), acc[g][t]);
            }
        }
    }
    for (int t = 0; t < T; ++t) {
        for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + t * ldy + g * y_step, acc[g][t]);
        _mm512_mask_storeu_ps(y + t * ldy + (G - 1) * y_step, mask_last, acc[G - 1][t]);
    }
}

/// The next tile's width with `left` tokens to go: kT, the rest, or for kT + 1 two near-equal
/// tiles rather than kT and a lone token.
template <int kT>
inline std::int64_t tile_width(std::int64_t left) {
    return left == kT + 1 ? (kT + 1) / 2 : left < kT ? left : kT;
}

/// Tokens [tb, te) over the row groups one at a time, each under tiles of up to kT tokens:
/// f.operator()<T>(group, first token, row mask, groups after the call up to one, counting
/// `ahead` groups in all, whether this is the first tile over the group).
template <int kT, typename F>
inline void block_group_tiles(std::int64_t n_groups, std::int64_t n_valid_rows, std::int64_t tb, std::int64_t te,
                              std::int64_t ahead, F&& f) {
    for (std::int64_t g = 0; g < n_groups; ++g) {
        const __mmask16 mask = row_mask(n_valid_rows - g * kPackRows);
        const int n_next = groups_after(ahead, g + 1, 1);
        for (std::int64_t t = tb; t < te;) {
            const std::int64_t n = tile_width<kT>(te - t);
            with_count<kT>(n, [&]<int T>() { f.template operator()<T>(g, t, mask, n_next, t == tb); });
            t += n;
        }
    }
}

/// block_group_tiles over the tokens in blocks of token_block; the last block hands its
/// prefetches on into the n_after groups of the caller's next run.
template <int kT, typename F>
inline void token_block_tiles(std::int64_t n_groups, std::int64_t n_valid_rows, std::int64_t n_tok, std::int64_t token_block,
                              std::int64_t n_after, F&& f) {
    for (std::int64_t tb = 0; tb < n_tok; tb += token_block) {
        const std::int64_t te = tb + token_block < n_tok ? tb + token_block : n_tok;
        block_group_tiles<kT>(n_groups, n_valid_rows, tb, te, n_groups + (te == n_tok ? n_after : 0), f);
    }
}

/// The multi-token loop of the GEMMs that take two groups a call: in blocks of token_block tokens,
/// pairs of groups (then a lone last one), each under tiles of kT tokens (then the rest):
/// f.operator()<G, T>(first group, step to the call's second group, first token, row mask of the
/// call's last group, groups after the call up to G, whether this is the first tile over these
/// groups). A block of at most kT tokens (a small batch, which streams the weights once as decode
/// does) takes spread_group_calls' pairs first: TinyLlama, 2 threads, `--parallel 2` Q4_K_M +8.4%
/// and +11.8%, Q8_0 +7.5%, Q4_0 +1.2%; `--parallel 4` Q8_0 +9.9%, Q4_0 +3.3% (old/new/new/old runs;
/// Q4_K_M's four tokens take kSmall's one-group tiles). A block of more than kT but at most kSmall
/// tokens goes one group at a time under tiles of up to kSmallT instead: a small batch is bound by
/// its reads, and wider tiles read the weights fewer times (kSmall = 0: never). The calls of the
/// last block hand their prefetches on into the n_after groups of the caller's next run, as
/// decode's do (one_token_pairs).
template <int kT, int kSmall, int kSmallT, typename F>
inline void pair_tiles(std::int64_t n_groups, std::int64_t n_valid_rows, std::int64_t n_tok, std::int64_t token_block,
                       std::int64_t n_after, F&& f) {
    for (std::int64_t tb = 0; tb < n_tok; tb += token_block) {
        const std::int64_t te = tb + token_block < n_tok ? tb + token_block : n_tok;
        // The last block of tokens hands its prefetches on into the n_after groups that follow.
        const std::int64_t ahead = n_groups + (te == n_tok ? n_after : 0);
        if (te - tb > kT && te - tb <= kSmall) {
            block_group_tiles<kSmallT>(n_groups, n_valid_rows, tb, te, ahead,
                                       [&]<int T>(std::int64_t g, std::int64_t t, __mmask16 mask, int n_next, bool stream) {
                                           f.template operator()<1, T>(g, 1, t, mask, n_next, stream);
                                       });
            continue;
        }
        const auto groups = [&]<int G>(std::int64_t g, std::int64_t step, __mmask16 mask, int n_next) {
            for (std::int64_t t = tb; t < te;) {
                const auto tile = [&]<int T>() { f.template operator()<G, T>(g, step, t, mask, n_next, t == tb); };
                const std::int64_t n = tile_width<kT>(te - t);
                with_count<kT>(n, tile);
                t += n;
            }
        };
        std::int64_t g = 0;
        if (te - tb <= kT) {  // one tile a pair: the batch streams the weights once
            g = spread_group_calls<2>(n_groups, n_valid_rows, [&](std::int64_t c, std::int64_t q) {
                groups.template operator()<2>(c, q, row_mask(kPackRows), 0);
            });
        }
        for (; g + 2 <= n_groups; g += 2) {
            groups.template operator()<2>(g, 1, row_mask(n_valid_rows - (g + 1) * kPackRows), groups_after(ahead, g + 2, 2));
        }
        if (g < n_groups) groups.template operator()<1>(g, 1, row_mask(n_valid_rows - g * kPackRows), groups_after(ahead, g + 1, 1));
    }
}

template <bool Q5, bool kGfni>
void gemm_q45k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
               std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abs,
               std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t n_after) {
    if (n_tok == 1) {
        one_token_pairs(n_groups, n_valid_rows, n_after,
                        [&]<int G>(std::int64_t g, std::int64_t step, __mmask16 mask_last, int n_next) {
                            one_token_q45k<Q5, G, kGfni>(nsb, w + static_cast<std::size_t>(g) * group_bytes,
                                                         step * group_bytes, a, ad, abs, y + g * kPackRows,
                                                         step * kPackRows, mask_last, n_next);
                        });
        return;
    }
    // Tiles of up to 3 tokens: 4 (G = 2) spilled its chains and ran slower. Batches of 4 to 8
    // tokens go one group under up to 4, which reads the weights fewer times (8 sequences in
    // pairs under 3 ran 4-6% slower than the old one-group tile; this way they are even). Q5_K
    // with GFNI takes one group under up to 4 at every batch size: TinyLlama, 2 threads, old/new
    // builds, Q5_K_M pp16 / pp64 / pp512 +29 / +24 / +31%, `--parallel 16` +20%. Without GFNI
    // that measured slower (Q5_K_M pp512 -8.3%), and for Q4_K up to 16 tokens was mixed
    // (`--parallel 16` +11-13% in one binary, -2.5% between builds; pp32 -2.1%).
    constexpr int kSmall = kGfni && Q5 ? 1 << 30 : 8;
    pair_tiles<3, kSmall, 4>(n_groups, n_valid_rows, n_tok, 32, n_after,
                  [&]<int G, int T>(std::int64_t g, std::int64_t step, std::int64_t t, __mmask16 mask, int n_next, bool stream) {
                      groups_tokens_q45k<Q5, G, T, kGfni>(nsb, w + static_cast<std::size_t>(g) * group_bytes, step * group_bytes,
                                                          a + t * 256, ad + t, abs + t * 4, n_tok,
                                                          y + t * ldy + g * kPackRows, ldy, step * kPackRows, mask, n_next, stream);
                  });
}

/// Chunk c of Q6_K sub-blocks j0 + 2p and j0 + 2p + 4 (j0 = 8h + m) of superblock o: the low and
/// high nibbles of one ql line joined with bit pairs p and p + 2 of a qh line. Decode takes p = 0
/// and 1 of each chunk; GCC merges the two calls' identical qh loads into one (its machine code
/// kept the same loads and stack use as its own unpacking had, and tg48 +1.5% / +0.6% Q6_K /
/// Q4_K_M, 4 / 3 rounds between builds).
template <bool kGfni>
[[gnu::always_inline]] inline void q6k_half_chunk(const std::uint8_t* o, int h, int m, int p, int c, __m512i low,
                                                  __m512i high2, __m512i (&w)[2]) {
    const __m512i ql = in_register(_mm512_loadu_si512(o + 64 * (16 * h + 4 * (m + 2 * p) + c)));
    const __m512i qh = in_register(_mm512_loadu_si512(o + 64 * (32 + 8 * h + 4 * m + c)));
    const __m512i qh_hi = p ? _mm512_srli_epi16(qh, 2) : qh;  // bit pair p + 2 at bits 4..5
    if constexpr (kGfni) {
        w[0] = select_bits(ql, _mm512_gf2p8affine_epi64_epi8(qh, bits_to(2 * p, 4, 2), 0), low);
        w[1] = _mm512_ternarylogic_epi32(_mm512_gf2p8affine_epi64_epi8(ql, bits_to(4, 0, 4), 0), qh_hi, high2, 0xF8);
    } else {
        w[0] = _mm512_ternarylogic_epi32(_mm512_and_si512(ql, low), p ? _mm512_slli_epi16(qh, 2) : _mm512_slli_epi16(qh, 4), high2, 0xF8);
        w[1] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low), qh_hi, high2, 0xF8);
    }
}

// Decode (one token) of Q6_K: the four sub-blocks of a half h with qh lines of parity m (jj = m,
// m + 2, m + 4, m + 6) read 8 ql lines (low and high nibbles) and 4 qh lines (bit pairs 0-3)
// once, chunk by chunk into four vpdpbusd chains, where a path sub-block by sub-block loaded
// each ql line twice and each qh line four times. G row groups at a time, as one_token_q45k. Same integer
// sums and float steps as group_tokens_q6k<1>.
template <int G, bool kGfni>
[[gnu::noinline]] void one_token_q6k(std::int64_t nsb, const std::uint8_t* wg0, std::size_t group_bytes,
                                     const std::int8_t* a, const float* ad, const std::int32_t* abias, float* y,
                                     std::int64_t y_step, __mmask16 mask_last, int n_next) {
    const __m512i low = _mm512_set1_epi8(0x0f), high2 = _mm512_set1_epi8(0x30);
    const GroupStreams<G> streams(wg0, group_bytes, static_cast<std::size_t>(nsb) * kPackQ6KBytes, n_next);
    __m512 acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* o[G];
        for (int g = 0; g < G; ++g) o[g] = wg0 + g * group_bytes + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(a + sb * 256);
        const std::int32_t* bias = abias + sb * 16;
        __m512i isum_a[G], isum_b[G];
        for (int g = 0; g < G; ++g) isum_a[g] = isum_b[g] = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
            for (int m = 0; m < 2; ++m) {
                const int j0 = 8 * h + m;  // sub-blocks j0, j0 + 2, j0 + 4, j0 + 6
                __m512i s[G][4];
                for (int g = 0; g < G; ++g) {
                    for (int i = 0; i < 4; ++i) s[g][i] = _mm512_set1_epi32(bias[j0 + 2 * i]);
                }
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c) {
                    streams.template ahead_step<kPackQ6KBytes, 16>(static_cast<std::size_t>(sb) * kPackQ6KBytes, 4 * (2 * h + m) + c);
                    __m512i xs[4];
                    for (int i = 0; i < 4; ++i) xs[i] = bcast4(at + 16 * (j0 + 2 * i) + 4 * c);
                    for (int g = 0; g < G; ++g) {
                        __m512i w02[2], w13[2];  // sub-blocks j0, j0 + 4 and j0 + 2, j0 + 6
                        q6k_half_chunk<kGfni>(o[g], h, m, 0, c, low, high2, w02);
                        q6k_half_chunk<kGfni>(o[g], h, m, 1, c, low, high2, w13);
                        const __m512i w[4] = {w02[0], w13[0], w02[1], w13[1]};
                        for (int i = 0; i < 4; ++i) s[g][i] = _mm512_dpbusd_epi32(s[g][i], w[i], xs[i]);
                    }
                }
                for (int g = 0; g < G; ++g) {
                    for (int i = 0; i < 4; ++i) {
                        const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o[g] + 3072 + 16 * (j0 + 2 * i))));
                        __m512i& isum = i % 2 ? isum_b[g] : isum_a[g];
                        isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(s[g][i], sc));
                    }
                }
            }
        }
        const __m512 da = _mm512_set1_ps(ad[sb]);
        for (int g = 0; g < G; ++g) {
            const __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o[g] + 3072 + 256)));
            acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(isum_a[g], isum_b[g])), _mm512_mul_ps(dv, da), acc[g]);
        }
    }
    for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + g * y_step, acc[g]);
    _mm512_mask_storeu_ps(y + (G - 1) * y_step, mask_last, acc[G - 1]);
}

// Small batches and prefill of Q6_K: T tokens on one row group. The superblock goes in eight
// steps of two sub-blocks (one ql line's two nibbles; each line loaded once, each qh line twice),
// two vpdpbusd chains a token: decode's four chains a step (one_token_q6k) times four tokens
// spilled. The old tile, sub-block by sub-block (each ql line loaded twice, each qh line four
// times), ran slower at every batch size (docs/performance.md). The sub-block sums, times their
// scales, add up to the scalar twin's integers (exact in any order), then the same float steps:
// identical results. `stream`: the call prefetches ahead (the first token tile over the group;
// later ones hit cache), two lines a step in address order, 8 KiB on: a step's qh line lies
// 2 KiB past its ql lines, and at the usual 4 KiB (1.2 superblocks) the qh lines came in too
// late (TinyLlama, 2 threads, `--parallel 2/3/8` +9/+28/+12%).
template <int T, bool kGfni>
[[gnu::noinline]] void group_tokens_q6k(std::int64_t nsb, const std::uint8_t* wg, std::size_t group_bytes,
                                        const std::int8_t* a, const float* ad, const std::int32_t* abias, std::int64_t n_tok,
                                        float* y, std::int64_t ldy, __mmask16 mask, int n_next, bool stream) {
    const __m512i low = _mm512_set1_epi8(0x0f), high2 = _mm512_set1_epi8(0x30);
    using Prefetch = StreamPrefetch<1, tile_ahead<1>()>;
    const Prefetch pf = Prefetch::of_group(wg, group_bytes, 0, static_cast<std::size_t>(nsb) * kPackQ6KBytes, n_next);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* o = wg + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(a + sb * n_tok * 256);
        const std::int32_t* bias = abias + sb * n_tok * 16;
        __m512i isum[T];
        for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
            for (int m = 0; m < 2; ++m) {
#pragma GCC unroll 2
                for (int p = 0; p < 2; ++p) {
                    const int j0 = 8 * h + m + 2 * p;  // sub-blocks j0 and j0 + 4
                    __m512i s[T][2];
                    for (int t = 0; t < T; ++t) {
                        for (int i = 0; i < 2; ++i) s[t][i] = _mm512_set1_epi32(bias[t * 16 + j0 + 4 * i]);
                    }
#pragma GCC unroll 4
                    for (int c = 0; c < 4; ++c) {
                        const int step = 8 * (2 * h + m) + 4 * p + c;  // 0..31
                        if (stream && 128 * step < kPackQ6KBytes) pf.template ahead<128>(o + 128 * step);
                        __m512i w[2];
                        q6k_half_chunk<kGfni>(o, h, m, p, c, low, high2, w);
                        for (int t = 0; t < T; ++t) {
                            for (int i = 0; i < 2; ++i) {
                                s[t][i] = _mm512_dpbusd_epi32(s[t][i], w[i], bcast4(at + t * 256 + 16 * (j0 + 4 * i) + 4 * c));
                            }
                        }
                    }
                    for (int i = 0; i < 2; ++i) {
                        const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 3072 + 16 * (j0 + 4 * i))));
                        for (int t = 0; t < T; ++t) isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s[t][i], sc));
                    }
                }
            }
        }
        const __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o + 3072 + 256)));
        for (int t = 0; t < T; ++t) {
            const __m512 da = _mm512_set1_ps(ad[sb * n_tok + t]);
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(dv, da), acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + t * ldy, mask, acc[t]);
}

template <bool kGfni>
void gemm_q6k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
              std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abias,
              std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t n_after) {
    if (n_tok == 1) {
        one_token_pairs(n_groups, n_valid_rows, n_after,
                        [&]<int G>(std::int64_t g, std::int64_t step, __mmask16 mask_last, int n_next) {
                            one_token_q6k<G, kGfni>(nsb, w + static_cast<std::size_t>(g) * group_bytes,
                                                    step * group_bytes, a, ad, abias, y + g * kPackRows,
                                                    step * kPackRows, mask_last, n_next);
                        });
        return;
    }
    // Tiles of up to 4 tokens: 5 and 6 measured 1-5% slower in prefill.
    token_block_tiles<4>(n_groups, n_valid_rows, n_tok, 32, n_after,
                         [&]<int T>(std::int64_t g, std::int64_t t, __mmask16 mask, int n_next, bool stream) {
                             group_tokens_q6k<T, kGfni>(nsb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes,
                                                        a + t * 256, ad + t, abias + t * 16, n_tok,
                                                        y + t * ldy + g * kPackRows, ldy, mask, n_next, stream);
                         });
}

/// The K-quant GEMMs of one variant, in the shape EMBER_DEFINE_PACKED takes.
template <bool kGfni>
struct KQuants {
    template <bool Q5, typename... Args>
    static void q45k(Args... x) { gemm_q45k<Q5, kGfni>(x...); }
    template <typename... Args>
    static void q6k(Args... x) { gemm_q6k<kGfni>(x...); }
};

}  // namespace packed_avx512
}  // namespace
}  // namespace ember::kernels

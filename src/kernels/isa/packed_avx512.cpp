// AVX-512 VNNI kernels of the repacked 16-row layouts (kernels/packed.hpp). One block of 16 rows
// is unpacked into 8 registers of unsigned weight bytes (lane r = row r, 4 values per chunk);
// each token then needs 8 vpdpbusd against broadcast 4-byte activation chunks, starting from the
// block's bias (-offset * sum(q)). Up to 8 tokens share one unpacked block; tokens are processed
// in blocks of 64 so their activations stay in L2 while the thread's row groups stream by.
// Kernel code only: no STL. Bit-identical to the scalar twin (packed_scalar.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/packed_driver-inl.hpp"
#include "kernels/isa/x86_common-inl.hpp"
#include "kernels/packed_isa.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels::avx512 {
namespace {

constexpr std::int64_t kTokenBlock = 64;

inline __m512i bcast4(const std::uint8_t* p) {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return _mm512_set1_epi32(v);
}

inline __mmask16 row_mask(std::int64_t rows) {
    return rows >= kPackRows ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << rows) - 1u);
}

/// One block of a group as 8 registers of unsigned weight bytes (lane r = row r, 4 values per
/// chunk): Q4_0's 4 chunks split into low and high nibbles, Q8_0's 8 chunks as they are.
template <bool Q4>
inline void load_block(const std::uint8_t* q, __m512i* wv) {
    if constexpr (Q4) {
        const __m512i low = _mm512_set1_epi8(0x0f);
        for (int m = 0; m < 4; ++m) {
            const __m512i x = in_register(_mm512_loadu_si512(q + 64 * m));
            wv[m] = _mm512_and_si512(x, low);
            wv[m + 4] = _mm512_and_si512(_mm512_srli_epi16(x, 4), low);
        }
    } else {
        for (int s = 0; s < 8; ++s) wv[s] = _mm512_loadu_si512(q + 64 * s);
    }
}

template <bool Q4, int T>
inline void group_tokens(std::int64_t nb, const std::uint8_t* wg, const std::int8_t* a,
                         const float* ad, const std::int32_t* ab, std::int64_t n_tok, float* y,
                         std::int64_t ldy, std::int64_t rows) {
    constexpr std::size_t kBlock = Q4 ? 4 * 64 : 8 * 64;
    const __mmask16 mask = row_mask(rows);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::uint8_t* q = wg + legacy_quants_at<kBlock>(b);
        if ((b & 1) == 0) prefetch_ahead<kLegacyPairBytes<kBlock>>(q);
        __m512i wv[8];
        load_block<Q4>(q, wv);
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + legacy_scales_at<kBlock>(b))));
        // C chains of 8 / C vpdpbusd per token: a lone token (decode) would otherwise wait on one
        // chain of 8 dependent vpdpbusd per block; integer sums, so any split is exact.
        constexpr int C = T <= 2 ? 4 : T <= 4 ? 2 : 1;
        __m512i is[T], part[C > 1 ? C - 1 : 1][T];
        const std::uint8_t* ab8 = reinterpret_cast<const std::uint8_t*>(a + b * n_tok * kQK);
        const std::int32_t* abb = ab + b * n_tok;
        const float* adb = ad + b * n_tok;
        for (int t = 0; t < T; ++t) is[t] = _mm512_set1_epi32(abb[t]);
        for (int c = 1; c < C; ++c) {
            for (int t = 0; t < T; ++t) part[c - 1][t] = _mm512_setzero_si512();
        }
        for (int s = 0; s < 8; s += C) {
            for (int t = 0; t < T; ++t) is[t] = _mm512_dpbusd_epi32(is[t], wv[s], bcast4(ab8 + t * kQK + 4 * s));
            for (int c = 1; c < C; ++c) {
                for (int t = 0; t < T; ++t) {
                    part[c - 1][t] = _mm512_dpbusd_epi32(part[c - 1][t], wv[s + c], bcast4(ab8 + t * kQK + 4 * (s + c)));
                }
            }
        }
        for (int c = 1; c < C; ++c) {
            for (int t = 0; t < T; ++t) is[t] = _mm512_add_epi32(is[t], part[c - 1][t]);
        }
        for (int t = 0; t < T; ++t) {
            const __m512 prod = _mm512_mul_ps(dw, _mm512_set1_ps(adb[t]));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[t]), prod, acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + t * ldy, mask, acc[t]);
}

// Decode (one token), G row groups at a time (Q4_0 4, Q8_0 2; see gemm): they share each
// broadcast activation chunk, and the core gets G weight streams and 2G accumulator chains in
// flight. Weights are loaded chunk by chunk next to their vpdpbusd instead of a whole block
// first (Q4_0 decode +4%, 11 interleaved pairs). Q4_0's high nibbles stay in place (x & 0xf0,
// 16 times their value: one op where a shift and a mask took two; the kernel is ALU-bound in
// cache) and their chain is divided by 16 (exactly: every term is a multiple of 16, and at most
// 4 x 4 x 240 x 128 per block, far from overflow). Per group the same integer sums (in another
// order) and float steps as group_tokens<Q4, 1>, so the results are identical.
// Each stream's prefetches run on into the next call's groups (StreamPrefetch over the group,
// the first n_next streams).
template <bool Q4, int G>
inline void groups_one_token(std::int64_t nb, const std::uint8_t* wg0, std::size_t group_bytes,
                             const std::int8_t* a, const float* ad, const std::int32_t* ab, float* y,
                             __mmask16 mask_last, int n_next) {
    constexpr std::size_t kBlock = Q4 ? 4 * 64 : 8 * 64;
    const __m512i low = _mm512_set1_epi8(0x0f);
    StreamPrefetch<G> stream[G];
    for (int g = 0; g < G; ++g) stream[g] = StreamPrefetch<G>::of_group(wg0, group_bytes, g, group_bytes, n_next);
    __m512 acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::uint8_t* a8 = reinterpret_cast<const std::uint8_t*>(a + b * kQK);
        const std::uint8_t* wb = wg0 + legacy_quants_at<kBlock>(b);
        __m512i x[8];
        for (int s = 0; s < 8; ++s) x[s] = bcast4(a8 + 4 * s);
        __m512i is[G], part[G];
        for (int g = 0; g < G; ++g) {
            if ((b & 1) == 0) stream[g].template ahead<kLegacyPairBytes<kBlock>>(wb + g * group_bytes);
            is[g] = _mm512_set1_epi32(ab[b]);
            part[g] = _mm512_setzero_si512();
        }
        if constexpr (Q4) {
            for (int m = 0; m < 4; ++m) {
                for (int g = 0; g < G; ++g) {
                    const __m512i w = in_register(_mm512_loadu_si512(wb + g * group_bytes + 64 * m));
                    is[g] = _mm512_dpbusd_epi32(is[g], _mm512_and_si512(w, low), x[m]);
                    part[g] = _mm512_dpbusd_epi32(part[g], _mm512_andnot_si512(low, w), x[m + 4]);
                }
            }
        } else {
            for (int c = 0; c < 8; c += 2) {
                for (int g = 0; g < G; ++g) {
                    const std::uint8_t* q = wb + g * group_bytes;
                    is[g] = _mm512_dpbusd_epi32(is[g], _mm512_loadu_si512(q + 64 * c), x[c]);
                    part[g] = _mm512_dpbusd_epi32(part[g], _mm512_loadu_si512(q + 64 * (c + 1)), x[c + 1]);
                }
            }
        }
        const __m512 da = _mm512_set1_ps(ad[b]);
        for (int g = 0; g < G; ++g) {
            const __m512 dw = _mm512_cvtph_ps(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg0 + g * group_bytes + legacy_scales_at<kBlock>(b))));
            const __m512i hi = Q4 ? _mm512_srai_epi32(part[g], 4) : part[g];
            acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[g], hi)), _mm512_mul_ps(dw, da), acc[g]);
        }
    }
    for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + g * kPackRows, acc[g]);
    _mm512_mask_storeu_ps(y + (G - 1) * kPackRows, mask_last, acc[G - 1]);
}

template <bool Q4>
void gemm(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
          std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* ab,
          std::int64_t n_tok, float* y, std::int64_t ldy) {
    if (n_tok == 1) {
        // Q4_0 four groups at a time: TinyLlama decode +7-10% on 2 threads and up to +25% on one
        // over two (interleaved), since each line is loaded once (in_register); three even, six
        // slower. Q8_0 reads twice the bytes a block and measured even with four: it keeps two.
        constexpr int kGroups = Q4 ? 4 : 2;
        std::int64_t g = 0;
        for (; g + kGroups <= n_groups; g += kGroups) {
            groups_one_token<Q4, kGroups>(nb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, ab,
                                          y + g * kPackRows, row_mask(n_valid_rows - (g + kGroups - 1) * kPackRows),
                                          groups_after(n_groups, g + kGroups, kGroups));
        }
        if (kGroups == 4 && g + 2 <= n_groups) {
            groups_one_token<Q4, 2>(nb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, ab,
                                    y + g * kPackRows, row_mask(n_valid_rows - (g + 1) * kPackRows),
                                    groups_after(n_groups, g + 2, 2));
            g += 2;
        }
        if (g < n_groups) {
            group_tokens<Q4, 1>(nb, w + static_cast<std::size_t>(g) * group_bytes, a, ad, ab, 1, y + g * kPackRows,
                                ldy, n_valid_rows - g * kPackRows);
        }
        return;
    }
    packed_tiles<8, kQK, 1>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, ab, n_tok, y, ldy, kTokenBlock,
                            []<int T>(auto... x) { group_tokens<Q4, T>(x...); });
}

// Q4_K and Q5_K: sub-block by sub-block, 8 vpdpbusd per token give the 16 rows' integer dots,
// scaled by the rows' 6-bit scales (vpmulld) into the superblock sum; the mins take 4 vpdpwssd
// against the activation's sub-block sums. Q5_K's fifth bit joins each nibble by one vpternlogd.
// Up to 4 tokens share each unpacked sub-block.
template <int T, bool Q5>
inline void group_tokens_q45k(std::int64_t nsb, const std::uint8_t* wg, const std::int8_t* a,
                              const float* ad, const std::int32_t* abs, std::int64_t n_tok,
                              float* y, std::int64_t ldy, std::int64_t rows) {
    constexpr std::size_t kQh = Q5 ? 512 : 0;  // bytes of qh lines before the Q4_K layout
    const __mmask16 mask = row_mask(rows);
    const __m512i low = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* qh = wg + static_cast<std::size_t>(sb) * (kPackQ4KBytes + kQh);
        const std::uint8_t* o = qh + kQh;
        const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(a + sb * n_tok * 256);
        __m512i isum[T];
        for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
        for (int j = 0; j < 8; ++j) {
            __m512i wv[8];
            const std::uint8_t* q = o + (j / 2) * 512;
            if ((j & 1) == 0) prefetch_ahead<512>(q);
            if (j == 7) prefetch_ahead<kPackQ4KBytes - 2048>(o + 2048);
            if (Q5 && j == 1) prefetch_ahead<kQh>(qh);
            for (int c = 0; c < 8; ++c) {
                const __m512i x = _mm512_loadu_si512(q + 64 * c);
                wv[c] = _mm512_and_si512((j & 1) ? _mm512_srli_epi16(x, 4) : x, low);
                if constexpr (Q5) {  // bit j of the qh line to bit 4
                    const __m512i h = _mm512_loadu_si512(qh + 64 * c);
                    const __m512i hb = j <= 4 ? _mm512_slli_epi16(h, 4 - j) : _mm512_srli_epi16(h, j - 4);
                    wv[c] = _mm512_ternarylogic_epi32(wv[c], hb, bit4, 0xF8);  // wv | (hb & 0x10)
                }
            }
            const __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 2048 + 16 * j)));
            // Two chains of 4 per token: halves the vpdpbusd latency chain (matters for decode).
            __m512i s[T], s2[T];
            for (int t = 0; t < T; ++t) s[t] = s2[t] = _mm512_setzero_si512();
            for (int c = 0; c < 4; ++c) {
                for (int t = 0; t < T; ++t) {
                    s[t] = _mm512_dpbusd_epi32(s[t], wv[c], bcast4(at + t * 256 + 32 * j + 4 * c));
                    s2[t] = _mm512_dpbusd_epi32(s2[t], wv[c + 4], bcast4(at + t * 256 + 32 * j + 4 * c + 16));
                }
            }
            for (int t = 0; t < T; ++t) {
                isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(_mm512_add_epi32(s[t], s2[t]), sc));
            }
        }
        const __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o + 2048 + 256)));
        const __m512 mv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o + 2048 + 256 + 32)));
        __m512i mins[4];
        for (int p = 0; p < 4; ++p) {
            mins[p] = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o + 2048 + 128 + 32 * p)));
        }
        const std::int32_t* bsb = abs + sb * n_tok * 4;
        const float* adb = ad + sb * n_tok;
        for (int t = 0; t < T; ++t) {
            __m512i msum = _mm512_setzero_si512();
            for (int p = 0; p < 4; ++p) msum = _mm512_dpwssd_epi32(msum, mins[p], _mm512_set1_epi32(bsb[t * 4 + p]));
            const __m512 da = _mm512_set1_ps(adb[t]);
            const __m512 dm = _mm512_mul_ps(mv, da);
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(dv, da), acc[t]);
            acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), dm, acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + t * ldy, mask, acc[t]);
}

/// The K-quants' decode loop: groups two at a time (two weight streams), then a lone last group:
/// f.operator()<G>(first group, row mask of the call's last group, groups after the call up to G).
template <typename F>
inline void one_token_pairs(std::int64_t n_groups, std::int64_t n_valid_rows, F&& f) {
    std::int64_t g = 0;
    for (; g + 2 <= n_groups; g += 2) {
        f.template operator()<2>(g, row_mask(n_valid_rows - (g + 1) * kPackRows), groups_after(n_groups, g + 2, 2));
    }
    if (g < n_groups) f.template operator()<1>(g, row_mask(n_valid_rows - g * kPackRows), 0);
}

// Decode (one token) of Q4_K/Q5_K, G row groups at a time: sub-blocks 2k and 2k + 1 are the low
// and high nibbles of the same 8 lines, so each line is loaded once (and Q5_K's qh line once) for
// both, into four vpdpbusd chains per group. The per-token path above reloads every line for the
// second nibble and ran at half this speed in cache (Q4_K ~200 -> ~95 cycles a superblock). Two
// groups share each broadcast activation chunk and give the core two weight streams (with the
// next call's groups prefetched, StreamPrefetch): TinyLlama-shaped matvecs on an Intel Xeon VM
// +4-8% at one thread and +7-8% at two over one group; four groups measured even in memory
// and slower in L2. Q4_K's high nibbles stay in place (16x; their sums, at most 4 x 63 x 32 x
// 240 x 128 a superblock, are divided by 16 exactly), as in the Q4_0 kernel. Same integer sums,
// same float steps as group_tokens_q45k<1, Q5>: identical results.
template <bool Q5, int G>
inline void one_token_q45k(std::int64_t nsb, const std::uint8_t* wg0, std::size_t group_bytes, const std::int8_t* a,
                           const float* ad, const std::int32_t* abs, float* y, __mmask16 mask_last, int n_next) {
    constexpr std::size_t kQh = Q5 ? 512 : 0;
    StreamPrefetch<G> stream[G];
    for (int g = 0; g < G; ++g) {
        stream[g] = StreamPrefetch<G>::of_group(wg0, group_bytes, g, static_cast<std::size_t>(nsb) * (kPackQ4KBytes + kQh), n_next);
    }
    const __m512i low = _mm512_set1_epi8(0x0f), bit4 = _mm512_set1_epi8(0x10);
    __m512 acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* qh[G];
        const std::uint8_t* o[G];
        for (int g = 0; g < G; ++g) {
            qh[g] = wg0 + g * group_bytes + static_cast<std::size_t>(sb) * (kPackQ4KBytes + kQh);
            o[g] = qh[g] + kQh;
        }
        const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(a + sb * 256);
        __m512i isum_lo[G], isum_hi[G];
        for (int g = 0; g < G; ++g) isum_lo[g] = isum_hi[g] = _mm512_setzero_si512();
        for (int k = 0; k < 4; ++k) {  // sub-blocks j = 2k (low nibbles) and 2k + 1 (high)
            __m512i s_lo[G], s2_lo[G], s_hi[G], s2_hi[G];
            for (int g = 0; g < G; ++g) {
                stream[g].template ahead<512>(o[g] + k * 512);
                if (k == 3) stream[g].template ahead<kPackQ4KBytes - 2048>(o[g] + 2048);
                if (Q5 && k == 0) stream[g].template ahead<kQh>(qh[g]);
                s_lo[g] = s2_lo[g] = s_hi[g] = s2_hi[g] = _mm512_setzero_si512();
            }
            for (int c = 0; c < 8; ++c) {
                const std::uint8_t* x_lo = at + 64 * k + 4 * c;  // sub-block 2k, chunk c
                const __m512i xl = bcast4(x_lo), xh = bcast4(x_lo + 32);
                for (int g = 0; g < G; ++g) {
                    const __m512i x = in_register(_mm512_loadu_si512(o[g] + k * 512 + 64 * c));
                    // Q4_K keeps the high nibbles in place (16x their value): one op, not two.
                    __m512i lo = _mm512_and_si512(x, low),
                            hi = Q5 ? _mm512_and_si512(_mm512_srli_epi16(x, 4), low) : _mm512_andnot_si512(low, x);
                    if constexpr (Q5) {  // +16 where bit 2k (2k + 1) of the qh line is set
                        const __m512i h = in_register(_mm512_loadu_si512(qh[g] + 64 * c));
                        lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(h, _mm512_set1_epi8(static_cast<char>(1 << (2 * k)))), lo, bit4);
                        hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(h, _mm512_set1_epi8(static_cast<char>(2 << (2 * k)))), hi, bit4);
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
    for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + g * kPackRows, acc[g]);
    _mm512_mask_storeu_ps(y + (G - 1) * kPackRows, mask_last, acc[G - 1]);
}

template <bool Q5>
void gemm_q45k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
               std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abs,
               std::int64_t n_tok, float* y, std::int64_t ldy) {
    if (n_tok == 1) {
        one_token_pairs(n_groups, n_valid_rows, [&]<int G>(std::int64_t g, __mmask16 mask_last, int n_next) {
            one_token_q45k<Q5, G>(nsb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, abs,
                                  y + g * kPackRows, mask_last, n_next);
        });
        return;
    }
    packed_tiles<4, 256, 4>(nsb, w, group_bytes, n_groups, n_valid_rows, a, ad, abs, n_tok, y, ldy, 32,
                            []<int T>(auto... x) { group_tokens_q45k<T, Q5>(x...); });
}

// Q6_K: sub-block by sub-block (16 values), 4 registers of 6-bit weights (a nibble of ql joined
// by vpternlogd with 2 bits of qh), 4 vpdpbusd per token from the bias -32 * sum(a), then times
// the rows' int8 scales (vpmulld) into the superblock sum. Up to 4 tokens share each sub-block.
template <int T>
inline void group_tokens_q6k(std::int64_t nsb, const std::uint8_t* wg, const std::int8_t* a,
                             const float* ad, const std::int32_t* abias, std::int64_t n_tok,
                             float* y, std::int64_t ldy, std::int64_t rows) {
    const __m512i low = _mm512_set1_epi8(0x0f), high2 = _mm512_set1_epi8(0x30);
    const __mmask16 mask = row_mask(rows);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* o = wg + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(a + sb * n_tok * 256);
        const std::int32_t* bias = abias + sb * n_tok * 16;
        __m512i isum[T];
        for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
        for (int j = 0; j < 16; ++j) {  // values 16j .. 16j + 15: half h, chunks 4jj .. 4jj + 3
            const int h = j / 8, jj = j % 8;
            if (j < 14) prefetch_ahead<256>(o + 256 * j);
            __m512i wv[4];
            for (int c = 0; c < 4; ++c) {
                const __m512i ql = _mm512_loadu_si512(o + 64 * (16 * h + 4 * (jj % 4) + c));
                const __m512i qh = _mm512_loadu_si512(o + 64 * (32 + 8 * h + 4 * (jj % 2) + c));
                const __m512i nib = _mm512_and_si512(jj < 4 ? ql : _mm512_srli_epi16(ql, 4), low);
                // qh bits 2(jj / 2) .. +1 to bits 4..5
                const int shift = 2 * (jj / 2);
                const __m512i hb = shift == 0   ? _mm512_slli_epi16(qh, 4)
                                   : shift == 2 ? _mm512_slli_epi16(qh, 2)
                                   : shift == 4 ? qh
                                                : _mm512_srli_epi16(qh, 2);
                wv[c] = _mm512_ternarylogic_epi32(nib, hb, high2, 0xF8);  // nib | (hb & 0x30)
            }
            const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 3072 + 16 * j)));
            for (int t = 0; t < T; ++t) {
                __m512i s = _mm512_set1_epi32(bias[t * 16 + j]);
                for (int c = 0; c < 4; ++c) s = _mm512_dpbusd_epi32(s, wv[c], bcast4(at + t * 256 + 16 * j + 4 * c));
                isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s, sc));
            }
        }
        const __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o + 3072 + 256)));
        const float* adb = ad + sb * n_tok;
        for (int t = 0; t < T; ++t) {
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(dv, _mm512_set1_ps(adb[t])), acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + t * ldy, mask, acc[t]);
}

// Decode (one token) of Q6_K: the four sub-blocks of a half h with qh lines of parity m (jj = m,
// m + 2, m + 4, m + 6) read 8 ql lines (low and high nibbles) and 4 qh lines (bit pairs 0-3)
// once, chunk by chunk into four vpdpbusd chains. The per-token path above loads each ql line
// twice and each qh line four times. G row groups at a time, as one_token_q45k. Same integer
// sums and float steps as group_tokens_q6k<1>.
template <int G>
inline void one_token_q6k(std::int64_t nsb, const std::uint8_t* wg0, std::size_t group_bytes, const std::int8_t* a,
                          const float* ad, const std::int32_t* abias, float* y, __mmask16 mask_last, int n_next) {
    const __m512i low = _mm512_set1_epi8(0x0f), high2 = _mm512_set1_epi8(0x30);
    StreamPrefetch<G> stream[G];
    for (int g = 0; g < G; ++g) {
        stream[g] = StreamPrefetch<G>::of_group(wg0, group_bytes, g, static_cast<std::size_t>(nsb) * kPackQ6KBytes, n_next);
    }
    __m512 acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* o[G];
        for (int g = 0; g < G; ++g) o[g] = wg0 + g * group_bytes + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(a + sb * 256);
        const std::int32_t* bias = abias + sb * 16;
        __m512i isum_a[G], isum_b[G];
        for (int g = 0; g < G; ++g) isum_a[g] = isum_b[g] = _mm512_setzero_si512();
        for (int h = 0; h < 2; ++h) {
            for (int m = 0; m < 2; ++m) {
                const int j0 = 8 * h + m;  // sub-blocks j0, j0 + 2, j0 + 4, j0 + 6
                __m512i s[G][4];
                for (int g = 0; g < G; ++g) {
                    stream[g].template ahead<896>(o[g] + 896 * (2 * h + m));
                    for (int i = 0; i < 4; ++i) s[g][i] = _mm512_set1_epi32(bias[j0 + 2 * i]);
                }
                for (int c = 0; c < 4; ++c) {
                    __m512i xs[4];
                    for (int i = 0; i < 4; ++i) xs[i] = bcast4(at + 16 * (j0 + 2 * i) + 4 * c);
                    for (int g = 0; g < G; ++g) {
                        const __m512i ql0 = in_register(_mm512_loadu_si512(o[g] + 64 * (16 * h + 4 * m + c)));
                        const __m512i ql2 = in_register(_mm512_loadu_si512(o[g] + 64 * (16 * h + 4 * (m + 2) + c)));
                        const __m512i qh = in_register(_mm512_loadu_si512(o[g] + 64 * (32 + 8 * h + 4 * m + c)));
                        const __m512i w[4] = {  // nibble | (qh bits 2i .. 2i + 1 at bits 4..5)
                            _mm512_ternarylogic_epi32(_mm512_and_si512(ql0, low), _mm512_slli_epi16(qh, 4), high2, 0xF8),
                            _mm512_ternarylogic_epi32(_mm512_and_si512(ql2, low), _mm512_slli_epi16(qh, 2), high2, 0xF8),
                            _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(ql0, 4), low), qh, high2, 0xF8),
                            _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(ql2, 4), low), _mm512_srli_epi16(qh, 2),
                                                      high2, 0xF8)};
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
    for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + g * kPackRows, acc[g]);
    _mm512_mask_storeu_ps(y + (G - 1) * kPackRows, mask_last, acc[G - 1]);
}

void gemm_q6k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
              std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abias,
              std::int64_t n_tok, float* y, std::int64_t ldy) {
    if (n_tok == 1) {
        one_token_pairs(n_groups, n_valid_rows, [&]<int G>(std::int64_t g, __mmask16 mask_last, int n_next) {
            one_token_q6k<G>(nsb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, abias,
                             y + g * kPackRows, mask_last, n_next);
        });
        return;
    }
    packed_tiles<4, 256, 16>(nsb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, 32,
                             []<int T>(auto... x) { group_tokens_q6k<T>(x...); });
}

}  // namespace

EMBER_DEFINE_PACKED(gemm, gemm_q45k, gemm_q6k)

}  // namespace ember::kernels::avx512

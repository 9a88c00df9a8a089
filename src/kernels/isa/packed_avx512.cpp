// AVX-512 VNNI kernels of the repacked 16-row layouts (kernels/packed.hpp). One block of 16 rows
// is 8 registers of unsigned weight bytes (lane r = row r, 4 values per chunk; Q4_0's 4 lines
// split into low and high nibbles); each token then needs 8 vpdpbusd against broadcast 4-byte
// activation chunks, starting from the block's bias (-offset * sum(q)). Up to 4 tokens share a
// block of two groups; tokens are processed in blocks of 64 so their activations stay in L2
// while the thread's row groups stream by.
// Kernel code only: no STL. Bit-identical to the scalar twin (packed_scalar.cpp).
// The K-quant kernels are in packed_avx512-inl.hpp.
#include "kernels/isa/packed_avx512-inl.hpp"

namespace ember::kernels {
namespace {
namespace packed_avx512 {

constexpr std::int64_t kTokenBlock = 64;

// One block (half kHalf of its pair) of decode on G row groups: they share each broadcast
// activation chunk, and the core gets G weight streams and 2G accumulator chains in flight.
// Weights are loaded chunk by chunk next to their vpdpbusd instead of a whole block first (Q4_0
// decode +4%, 11 interleaved pairs). Q4_0's high nibbles stay in place (x & 0xf0, 16 times their
// value: one op where a shift and a mask took two; the kernel is ALU-bound in cache) and their
// chain is divided by 16 (exactly: every term is a multiple of 16, and at most 4 x 4 x 240 x 128
// per block, far from overflow). Per group the same integer sums (in another order) and float
// steps as groups_tokens<Q4, 1, 1>, so the results are identical.
template <bool Q4, int G, int kHalf>
[[gnu::always_inline]] inline void block_one_token(const std::uint8_t* wb, const std::uint8_t* scales,
                                                   std::size_t group_bytes, const std::uint8_t* a8, std::int32_t bias,
                                                   float da, const GroupStreams<G>& streams, std::size_t pair_off,
                                                   __m512 (&acc)[G]) {
    constexpr std::size_t kPair = kLegacyPairBytes<Q4 ? 4 * 64 : 8 * 64>;
    const __m512i low = _mm512_set1_epi8(0x0f);
    __m512i is[G], part[G];
    for (int g = 0; g < G; ++g) {
        is[g] = _mm512_set1_epi32(bias);
        part[g] = _mm512_setzero_si512();
    }
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
        streams.template ahead_step<kPair, 8>(pair_off, kHalf * 4 + m);  // a pair is read in 8 steps
        if constexpr (Q4) {
            const __m512i xl = bcast4(a8 + 4 * m), xh = bcast4(a8 + 4 * (m + 4));
#pragma GCC unroll 8
            for (int g = 0; g < G; ++g) {
                const __m512i w = in_register(_mm512_loadu_si512(wb + g * group_bytes + 64 * m));
                is[g] = _mm512_dpbusd_epi32(is[g], _mm512_and_si512(w, low), xl);
                part[g] = _mm512_dpbusd_epi32(part[g], _mm512_andnot_si512(low, w), xh);
            }
        } else {
            const __m512i x0 = bcast4(a8 + 8 * m), x1 = bcast4(a8 + 8 * m + 4);
#pragma GCC unroll 8
            for (int g = 0; g < G; ++g) {
                const std::uint8_t* q = wb + g * group_bytes + 128 * m;
                is[g] = _mm512_dpbusd_epi32(is[g], _mm512_loadu_si512(q), x0);
                part[g] = _mm512_dpbusd_epi32(part[g], _mm512_loadu_si512(q + 64), x1);
            }
        }
    }
    const __m512 dab = _mm512_set1_ps(da);
    for (int g = 0; g < G; ++g) {
        const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scales + g * group_bytes)));
        const __m512i hi = Q4 ? _mm512_srai_epi32(part[g], 4) : part[g];
        acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[g], hi)), _mm512_mul_ps(dw, dab), acc[g]);
    }
}

// Decode (one token), G row groups `group_bytes` apart (4, a remainder 2; see gemm), a block pair
// per iteration so that each step's prefetches are known when compiled (GroupStreams: they run on
// into the next call's groups where that call takes G groups). Group g's rows go to y + g * y_step.
// Out of line, so that spread and neighbouring calls run the same code (see one_token_pairs).
template <bool Q4, int G>
[[gnu::noinline]] void groups_one_token(std::int64_t nb, const std::uint8_t* wg0, std::size_t group_bytes,
                                        const std::int8_t* a, const float* ad, const std::int32_t* ab, float* y,
                                        std::int64_t y_step, __mmask16 mask_last, int n_next) {
    constexpr std::size_t kBlock = Q4 ? 4 * 64 : 8 * 64;
    const GroupStreams<G> streams(wg0, group_bytes, group_bytes, n_next);
    const auto* a8 = reinterpret_cast<const std::uint8_t*>(a);
    __m512 acc[G];
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    std::int64_t b = 0;
    for (; b + 1 < nb; b += 2) {
        const std::size_t off = legacy_quants_at<kBlock>(b);
        const std::uint8_t* scales = wg0 + legacy_scales_at<kBlock>(b);
        block_one_token<Q4, G, 0>(wg0 + off, scales, group_bytes, a8 + b * kQK, ab[b], ad[b], streams, off, acc);
        block_one_token<Q4, G, 1>(wg0 + off + kBlock, scales + 2 * kPackRows, group_bytes, a8 + (b + 1) * kQK, ab[b + 1],
                                  ad[b + 1], streams, off, acc);
    }
    if (b < nb) {  // an odd last block
        const std::size_t off = legacy_quants_at<kBlock>(b);
        block_one_token<Q4, G, 0>(wg0 + off, wg0 + legacy_scales_at<kBlock>(b), group_bytes, a8 + b * kQK, ab[b], ad[b],
                                  streams, off, acc);
    }
    for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + g * y_step, acc[g]);
    _mm512_mask_storeu_ps(y + (G - 1) * y_step, mask_last, acc[G - 1]);
}

// Prefill and small batches: T tokens (up to 4) on G row groups (2, or 1 for a last odd group).
// Each broadcast activation chunk feeds G vpdpbusd and each weight line T; the groups give the
// core two weight streams. It replaced one group under up to 8 tokens (one stream, a broadcast
// per vpdpbusd): TinyLlama, 2 threads, batches of 2 and 4 sequences +17-27% (Q4_0), pp512
// +6-11%. Per (row, token) the integer sums are exact in any order and the float steps are
// the scalar twin's, so the results are identical.
// `stream`: the first token tile over these groups prefetches ahead (StreamPrefetch, into the
// next call's groups); the later tiles find the lines in cache.
// Q4_0's high nibbles: in place (x & 0xf0, divided by 16 after the block, as in decode) for up
// to 2 tokens; from 3 tokens shifted down once per weight line (srli, and) instead, so no token
// pays the division: 4-, 8- and 64-token products in L2 (`bench_matmul_reps q4_0 1 T`, 11
// interleaved rounds each on the Zen 5 VM) won 25 of 33 pairs, medians -3% to -6%.
template <bool Q4, int G, int T>
inline void groups_tokens(std::int64_t nb, const std::uint8_t* wg0, std::size_t group_bytes, const std::int8_t* a,
                          const float* ad, const std::int32_t* ab, std::int64_t n_tok, float* y, std::int64_t ldy,
                          std::int64_t y_step, __mmask16 mask_last, int n_next, bool stream) {
    constexpr std::size_t kBlock = Q4 ? 4 * 64 : 8 * 64;
    constexpr bool kShifted = T >= 3;  // Q4_0's high nibbles shifted down (see above)
    const __m512i low = _mm512_set1_epi8(0x0f);
    StreamPrefetch<G> pf[G];
    for (int g = 0; g < G; ++g) pf[g] = StreamPrefetch<G>::of_group(wg0, group_bytes, g, group_bytes, n_next);
    __m512 acc[G][T];
    for (int g = 0; g < G; ++g) {
        for (int t = 0; t < T; ++t) acc[g][t] = _mm512_setzero_ps();
    }
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::uint8_t* wb = wg0 + legacy_quants_at<kBlock>(b);
        if (stream && (b & 1) == 0) {
            for (int g = 0; g < G; ++g) pf[g].template ahead<kLegacyPairBytes<kBlock>>(wb + g * group_bytes);
        }
        const std::uint8_t* a8 = reinterpret_cast<const std::uint8_t*>(a + b * n_tok * kQK);
        __m512i is[G][T], part[G][T];
        for (int t = 0; t < T; ++t) {
            const __m512i bias = _mm512_set1_epi32(ab[b * n_tok + t]);
            for (int g = 0; g < G; ++g) {
                is[g][t] = bias;
                part[g][t] = _mm512_setzero_si512();
            }
        }
        if constexpr (Q4) {
            for (int m = 0; m < 4; ++m) {
                __m512i lo[G], hi[G];
                for (int g = 0; g < G; ++g) {
                    const __m512i w = in_register(_mm512_loadu_si512(wb + g * group_bytes + 64 * m));
                    lo[g] = _mm512_and_si512(w, low);
                    hi[g] = kShifted ? _mm512_and_si512(_mm512_srli_epi16(w, 4), low) : _mm512_andnot_si512(low, w);
                }
                for (int t = 0; t < T; ++t) {
                    const __m512i xl = bcast4(a8 + t * kQK + 4 * m);
                    for (int g = 0; g < G; ++g) is[g][t] = _mm512_dpbusd_epi32(is[g][t], lo[g], xl);
                    const __m512i xh = bcast4(a8 + t * kQK + 4 * (m + 4));
                    for (int g = 0; g < G; ++g) part[g][t] = _mm512_dpbusd_epi32(part[g][t], hi[g], xh);
                }
            }
        } else {
            for (int c = 0; c < 8; c += 2) {
                __m512i w0[G], w1[G];
                for (int g = 0; g < G; ++g) {
                    w0[g] = in_register(_mm512_loadu_si512(wb + g * group_bytes + 64 * c));
                    w1[g] = in_register(_mm512_loadu_si512(wb + g * group_bytes + 64 * (c + 1)));
                }
                for (int t = 0; t < T; ++t) {
                    const __m512i x0 = bcast4(a8 + t * kQK + 4 * c);
                    for (int g = 0; g < G; ++g) is[g][t] = _mm512_dpbusd_epi32(is[g][t], w0[g], x0);
                    const __m512i x1 = bcast4(a8 + t * kQK + 4 * (c + 1));
                    for (int g = 0; g < G; ++g) part[g][t] = _mm512_dpbusd_epi32(part[g][t], w1[g], x1);
                }
            }
        }
        for (int g = 0; g < G; ++g) {
            const __m512 dw = _mm512_cvtph_ps(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg0 + g * group_bytes + legacy_scales_at<kBlock>(b))));
            for (int t = 0; t < T; ++t) {
                const __m512 prod = _mm512_mul_ps(dw, _mm512_set1_ps(ad[b * n_tok + t]));
                const __m512i hi = Q4 && !kShifted ? _mm512_srai_epi32(part[g][t], 4) : part[g][t];
                acc[g][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(is[g][t], hi)), prod, acc[g][t]);
            }
        }
    }
    for (int t = 0; t < T; ++t) {
        for (int g = 0; g + 1 < G; ++g) _mm512_storeu_ps(y + t * ldy + g * y_step, acc[g][t]);
        _mm512_mask_storeu_ps(y + t * ldy + (G - 1) * y_step, mask_last, acc[G - 1][t]);
    }
}

template <bool Q4>
void gemm(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
          std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* ab,
          std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t n_after) {
    if (n_tok == 1) {
        // Four groups at a time. Q4_0: TinyLlama decode +7-10% on 2 threads and up to +25% on one
        // over two (interleaved), since each line is loaded once (in_register); three even, six
        // slower. Q8_0 (twice the bytes a block) on the Zen 5 VM, against two groups, 8
        // interleaved rounds: 68 -> 74% of the bandwidth measured in the same run on 1 thread, 66
        // -> 75% on 2 (6 and 7 of 8 rounds won); the same in L2 (72-78 GB/s either way). A pure
        // read of the pattern streams slower in two 4 KiB-ahead streams than in four 2 KiB ones.
        // Eight Q4_0 groups (1 KiB ahead each) spill registers: 10 of 200 alternating tokens won.
        constexpr int kGroups = ::ember::kernels::avx512::kLegacyDecodeGroups;
        // Q8_0 takes spread_group_calls' calls first (TinyLlama decode, same build, 2 threads
        // +1.6%, 4 of 6; one thread +2.8%, 3 of 4); Q4_0 ran 1.8% slower so (1 of 6, twice).
        std::int64_t g = 0;
        if constexpr (!Q4) {
            g = spread_group_calls<kGroups>(n_groups, n_valid_rows, [&](std::int64_t c, std::int64_t q) {
                groups_one_token<Q4, kGroups>(nb, w + static_cast<std::size_t>(c) * group_bytes,
                                              static_cast<std::size_t>(q) * group_bytes, a, ad, ab, y + c * kPackRows,
                                              q * kPackRows, row_mask(kPackRows), 0);
            });
        }
        for (; g + kGroups <= n_groups; g += kGroups) {
            groups_one_token<Q4, kGroups>(nb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, ab,
                                          y + g * kPackRows, kPackRows,
                                          row_mask(n_valid_rows - (g + kGroups - 1) * kPackRows),
                                          groups_after(n_groups + n_after, g + kGroups, kGroups));
        }
        if (g + 2 <= n_groups) {
            groups_one_token<Q4, 2>(nb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, ab,
                                    y + g * kPackRows, kPackRows, row_mask(n_valid_rows - (g + 1) * kPackRows),
                                    groups_after(n_groups + n_after, g + 2, 2));
            g += 2;
        }
        if (g < n_groups) {
            groups_tokens<Q4, 1, 1>(nb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, ab, 1,
                                    y + g * kPackRows, ldy, kPackRows, row_mask(n_valid_rows - g * kPackRows), 0, true);
        }
        return;
    }
    pair_tiles<4, 0, 1>(n_groups, n_valid_rows, n_tok, kTokenBlock, n_after,
                  [&]<int G, int T>(std::int64_t g, std::int64_t step, std::int64_t t, __mmask16 mask, int n_next, bool stream) {
                      groups_tokens<Q4, G, T>(nb, w + static_cast<std::size_t>(g) * group_bytes, step * group_bytes, a + t * kQK,
                                              ad + t, ab + t, n_tok, y + t * ldy + g * kPackRows, ldy, step * kPackRows, mask, n_next, stream);
                  });
}

}  // namespace packed_avx512
}  // namespace

namespace avx512 {
EMBER_DEFINE_PACKED(packed_avx512::gemm, packed_avx512::KQuants<false>::q45k, packed_avx512::KQuants<false>::q6k)
}  // namespace avx512
}  // namespace ember::kernels

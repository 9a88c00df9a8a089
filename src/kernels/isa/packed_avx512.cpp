// AVX-512 VNNI kernels of the repacked 16-row layouts (kernels/packed.hpp). One block of 16 rows
// is unpacked into 8 registers of unsigned weight bytes (lane r = row r, 4 values per chunk);
// each token then needs 8 vpdpbusd against broadcast 4-byte activation chunks, starting from the
// block's bias (-offset * sum(q)). Up to 8 tokens share one unpacked block; tokens are processed
// in blocks of 64 so their activations stay in L2 while the thread's row groups stream by.
// Kernel code only: no STL. Bit-identical to the scalar twin (packed_scalar.cpp).
// The K-quant kernels are in packed_avx512-inl.hpp.
#include "kernels/isa/packed_avx512-inl.hpp"

namespace ember::kernels {
namespace {
namespace packed_avx512 {

constexpr std::int64_t kTokenBlock = 64;

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

}  // namespace packed_avx512
}  // namespace

namespace avx512 {
EMBER_DEFINE_PACKED(packed_avx512::gemm, packed_avx512::KQuants<false>::q45k, packed_avx512::KQuants<false>::q6k)
}  // namespace avx512
}  // namespace ember::kernels

// AVX2 kernels of the repacked 16-row layouts (kernels/packed.hpp), for CPUs without AVX-512:
// each 16-row group is two halves of 8 rows (the 32-byte halves of every 64-byte line).
// packed_avx2.cpp instantiates them with kVnni = false: vpdpbusd is emulated exactly by
// vpmaddubsw (unsigned weights times signed activation bytes, int16 pair sums) + vpmaddwd, the
// pair sums added in int16 only as far as they cannot saturate (activations are within +-127):
//   Q4_0, Q4_K: nibbles 0..15: a pair is at most 3810, eight chunks 30480;
//   Q5_K: 0..31: 7874 a pair, runs of four chunks; Q6_K: 0..63: 16002 a pair, runs of two;
//   Q8_0 multiplies |w| by a * sign(w) instead (at most 2 * 128 * 127 a pair, one at a time).
// packed_avx2_vnni.cpp (built with -mavxvnni) instantiates kVnni = true: one vpdpbusd per chunk
// into int32, Q8_0's biased bytes as they are. Up to 4 tokens share each unpacked chunk; tokens
// go in blocks that stay in L2 while the thread's row groups stream by. Kernel code only, internal
// linkage. Bit-identical to the scalar twins (packed_scalar.cpp): the same exact integer sums,
// then the same float steps.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/packed_driver-inl.hpp"
#include "kernels/isa/x86_common-inl.hpp"
#include "kernels/packed_isa.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels {
namespace {
namespace packed_avx2 {

constexpr std::int64_t kTokenBlock = 64;
constexpr int kHalfRows = kPackRows / 2;
constexpr std::size_t kQ4Block = 4 * 64;  // bytes of one packed Q4_0 block of 16 rows
constexpr std::size_t kQ8Block = 8 * 64;  // ... of Q8_0

inline __m256i bcast4(const std::int8_t* p) {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

// Stores half `half`'s T accumulators: the rows of it that exist out of the group's `rows`.
template <int T>
inline void store_half(const __m256* acc, int half, float* y, std::int64_t ldy, std::int64_t rows) {
    const std::int64_t n = rows - half * kHalfRows < kHalfRows ? rows - half * kHalfRows : kHalfRows;
    y += half * kHalfRows;
    for (int t = 0; t < T; ++t) {
        if (n == kHalfRows) {
            _mm256_storeu_ps(y + t * ldy, acc[t]);
        } else {
            alignas(32) float out[kHalfRows];
            _mm256_store_ps(out, acc[t]);
            for (std::int64_t r = 0; r < n; ++r) y[t * ldy + r] = out[r];
        }
    }
}

// Runs kernel<H, T>(first half) over a group's halves that hold rows. Up to 2 tokens take both
// halves in one pass (H = 2), so the weights stream from memory once at the pace of the whole
// group; with more tokens the accumulators of two halves would not fit in 16 registers, and
// each half makes its own pass (the second from cache). Two tokens in one pass, TinyLlama
// `--parallel 2`, 2 threads, EMBER_ISA=avx2 (avx2_vnni), 2 interleaved rounds: Q8_0 +25-38%
// (+16%), Q4_K_M +5-11% (+8-23%), Q4_0 even.
template <int T, class Kernel>
inline void for_each_half(std::int64_t rows, Kernel&& kernel) {
    if constexpr (T <= 2) {
        if (rows > kHalfRows) {
            kernel.template operator()<2>(0);
            return;
        }
    }
    for (int half = 0; half < 2 && rows > half * kHalfRows; ++half) kernel.template operator()<1>(half);
}

// The loop of every GEMM here. A lone token with `pairs` set: pair(g, rows of group g + 1, groups
// after the call up to 2, counting the n_after that follow the n_groups) for each pair of groups,
// two weight streams a call. Then, for the other groups, packed_for_each's token tiles (up to
// kMaxT tokens), then the halves of each group; kernel<H, T>(group g's bytes, first half, g,
// first token t, rows of g) does the rest.
template <int kMaxT = 4, class Pair, class Kernel>
inline void gemm_halves(const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups, std::int64_t n_valid_rows,
                        std::int64_t n_tok, std::int64_t token_block, bool pairs, std::int64_t n_after, Pair&& pair,
                        Kernel&& kernel) {
    std::int64_t g0 = 0;
    if (pairs && n_tok == 1) {
        for (; g0 + 2 <= n_groups; g0 += 2) {
            pair(g0, n_valid_rows - (g0 + 1) * kPackRows, groups_after(n_groups + n_after, g0 + 2, 2));
        }
    }
    packed_for_each<kMaxT>(n_groups - g0, n_valid_rows - g0 * kPackRows, n_tok, token_block,
                           [&]<int T>(std::int64_t g, std::int64_t rows, std::int64_t t) {
                               for_each_half<T>(rows, [&]<int H>(int half0) {
                                   kernel.template operator()<H, T>(w + static_cast<std::size_t>(g0 + g) * group_bytes,
                                                                    half0, g0 + g, t, rows);
                               });
                           });
}

/// An empty asm on a running sum: GCC would otherwise reassociate a token's chain of integer adds
/// into a tree whose live products spill (AVX2 Q4_0 prefill ran 25-35% slower, Q8_0 13%).
inline void keep_order(__m256i& sum) { asm("" : "+x"(sum)); }

inline __m256i load8(const std::uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }

/// acc + sum over chunks c < N of the 4-byte dots of wv[c] (unsigned) with x + 4c (signed), per
/// lane, exactly. AVX2: the pair sums are added in int16 (N within the bounds above), then
/// widened; AVX-VNNI: one vpdpbusd per chunk.
template <bool kVnni, int N>
inline __m256i dot_run(__m256i acc, const __m256i* wv, const std::int8_t* x) {
#if defined(__AVXVNNI__)
    if constexpr (kVnni) {
        for (int c = 0; c < N; ++c) acc = _mm256_dpbusd_avx_epi32(acc, wv[c], bcast4(x + 4 * c));
        return acc;
    }
#endif
    __m256i s16 = _mm256_maddubs_epi16(wv[0], bcast4(x));
    for (int c = 1; c < N; ++c) s16 = _mm256_add_epi16(s16, _mm256_maddubs_epi16(wv[c], bcast4(x + 4 * c)));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
}

/// One chunk of dot_run: acc + the 4-byte dots of w with x (AVX-VNNI: int32 lanes), or acc + the
/// pair sums of w with x (AVX2: int16 lanes, widened by the caller).
template <bool kVnni>
inline __m256i dot_step(__m256i acc, __m256i w, const std::int8_t* x) {
#if defined(__AVXVNNI__)
    if constexpr (kVnni) return _mm256_dpbusd_avx_epi32(acc, w, bcast4(x));
#endif
    __m256i r = _mm256_add_epi16(acc, _mm256_maddubs_epi16(w, bcast4(x)));
    keep_order(r);
    return r;
}

/// The 8 rows' unsigned byte scales of a half (at p) as the K-quant kernels take them: int32
/// lanes for AVX-VNNI (scaled_run), (sc, sc) int16 pairs for AVX2 (vpmaddwd then multiplies
/// both pair sums of a lane by sc).
template <bool kVnni>
inline __m256i row_scales(const std::uint8_t* p) {
    const __m256i sc = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    if constexpr (kVnni) return sc;
    return _mm256_or_si256(_mm256_and_si256(sc, _mm256_set1_epi32(0xffff)), _mm256_slli_epi32(sc, 16));
}

/// acc + sc * (the dots of dot_run), per lane, AVX-VNNI: vpmulld after the vpdpbusd chain (the
/// AVX2 K-quant kernels run their chunks through dot_step and vpmaddwd instead).
template <bool kVnni, int N>
inline __m256i scaled_run(__m256i acc, const __m256i* wv, const std::int8_t* x, __m256i sc) {
    static_assert(kVnni);
    return _mm256_add_epi32(acc, _mm256_mullo_epi32(dot_run<true, N>(_mm256_setzero_si256(), wv, x), sc));
}

// The integer dots of one half-block (q: its first 32-byte half-line) with T tokens, from the
// bias (-offset * sum(a)): ab8 the tokens' activation bytes of the block (kQK apart), abb their
// biases.
template <bool kVnni, bool Q4, int T>
inline void half_block_dots(const std::uint8_t* q, const std::int8_t* ab8, const std::int32_t* abb, __m256i* is) {
    if constexpr (Q4) {
        // Chunk by chunk, both nibbles into each token's sum at once: only the T sums stay
        // live (unpacking all 8 chunks first, then token by token, spilled; AVX2 prefill
        // +22-35%). AVX2's int16 sums hold all eight chunks (see above).
        const __m256i low = _mm256_set1_epi8(0x0f);
        if constexpr (kVnni) {
            // AVX-VNNI: the high nibbles stay in place (x & 0xf0, 16 times their value) in a
            // chain of their own, divided by 16 at the end, as AVX-512 does: exact, every term a
            // multiple of 16, at most 4 x 4 x 240 x 128 a block. One op a line fewer, and two
            // chains a token instead of one.
            __m256i s[T], h[T];
            for (int t = 0; t < T; ++t) {
                s[t] = _mm256_set1_epi32(abb[t]);
                h[t] = _mm256_setzero_si256();
            }
            for (int m = 0; m < 4; ++m) {
                const __m256i x = load8(q + 64 * m);
                const __m256i lo = _mm256_and_si256(x, low), hi = _mm256_andnot_si256(low, x);
                for (int t = 0; t < T; ++t) {
                    s[t] = dot_step<true>(s[t], lo, ab8 + t * kQK + 4 * m);       // values 4m..4m+3
                    h[t] = dot_step<true>(h[t], hi, ab8 + t * kQK + 16 + 4 * m);  // 16 x values 16+4m..
                }
            }
            for (int t = 0; t < T; ++t) is[t] = _mm256_add_epi32(s[t], _mm256_srai_epi32(h[t], 4));
            return;
        }
        __m256i s[T];
        for (int t = 0; t < T; ++t) s[t] = _mm256_setzero_si256();
        for (int m = 0; m < 4; ++m) {
            const __m256i x = load8(q + 64 * m);
            const __m256i lo = _mm256_and_si256(x, low), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), low);
            for (int t = 0; t < T; ++t) {
                s[t] = dot_step<false>(s[t], lo, ab8 + t * kQK + 4 * m);       // values 4m..4m+3
                s[t] = dot_step<false>(s[t], hi, ab8 + t * kQK + 16 + 4 * m);  // values 16+4m..
            }
        }
        for (int t = 0; t < T; ++t) {
            is[t] = _mm256_add_epi32(_mm256_set1_epi32(abb[t]), _mm256_madd_epi16(s[t], _mm256_set1_epi16(1)));
        }
    } else if constexpr (kVnni) {  // w + 128 stored: the bias holds -128 * sum(a); chunk by chunk as Q4_0
        for (int t = 0; t < T; ++t) is[t] = _mm256_set1_epi32(abb[t]);
        for (int c = 0; c < 8; ++c) {
            const __m256i w = load8(q + 64 * c);
            for (int t = 0; t < T; ++t) is[t] = dot_step<true>(is[t], w, ab8 + t * kQK + 4 * c);
        }
    } else {
        // The signed weights (w + 128 stored) against the activations directly, so the
        // bias (-128 * sum(a)) is not needed: |w| <= 128 times a * sign(w), |a| <= 127.
        for (int t = 0; t < T; ++t) is[t] = _mm256_setzero_si256();
        for (int c = 0; c < 8; ++c) {
            const __m256i w = _mm256_xor_si256(load8(q + 64 * c), _mm256_set1_epi8(static_cast<char>(0x80)));
            const __m256i mag = _mm256_abs_epi8(w);  // -128 gives 0x80: 128 unsigned
            for (int t = 0; t < T; ++t) {
                const __m256i signed_a = _mm256_sign_epi8(bcast4(ab8 + t * kQK + 4 * c), w);
                is[t] = _mm256_add_epi32(is[t], _mm256_madd_epi16(_mm256_maddubs_epi16(mag, signed_a), _mm256_set1_epi16(1)));
                keep_order(is[t]);
            }
        }
    }
}

// Halves [half0, half0 + H) (rows 8 * half .. + 8) of one group against T tokens, for each block
// the integer dot from the bias (-offset * sum(a)), then acc = fma(dot, dw * da, acc).
template <bool kVnni, bool Q4, int H, int T>
inline void halves_tokens(std::int64_t nb, const std::uint8_t* wg, int half0, const std::int8_t* a,
                          const float* ad, const std::int32_t* ab, std::int64_t n_tok, float* y,
                          std::int64_t ldy, std::int64_t rows) {
    constexpr std::size_t kBlock = Q4 ? kQ4Block : kQ8Block;
    __m256 acc[H][T];
    for (int h = 0; h < H; ++h) {
        for (int t = 0; t < T; ++t) acc[h][t] = _mm256_setzero_ps();
    }
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::uint8_t* q = wg + legacy_quants_at<kBlock>(b);
        const auto* scales = reinterpret_cast<const std::uint16_t*>(wg + legacy_scales_at<kBlock>(b));
        if (half0 == 0 && (b & 1) == 0) prefetch_ahead<kLegacyPairBytes<kBlock>>(q);  // half 1 reads the same lines
        for (int h = 0; h < H; ++h) {
            const int half = half0 + h;
            __m256i is[T];
            half_block_dots<kVnni, Q4, T>(q + half * 32, a + b * n_tok * kQK, ab + b * n_tok, is);
            const __m256 dw =
                _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + half * kHalfRows)));
            for (int t = 0; t < T; ++t) {
                const __m256 prod = _mm256_mul_ps(dw, _mm256_set1_ps(ad[b * n_tok + t]));
                acc[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[t]), prod, acc[h][t]);
            }
        }
    }
    for (int h = 0; h < H; ++h) store_half<T>(acc[h], half0 + h, y, ldy, rows);
}

// Decode (one token), G whole row groups at a time (both halves of each): the core gets G weight
// streams, whose prefetches run on into the next call's groups (GroupStreams), as the AVX-512
// kernels do. Per group and half the same integer sums and float steps as halves_tokens<.., 2, 1>:
// identical results. `rows_last`: the rows of the call's last group.
template <bool kVnni, bool Q4, int G>
inline void groups_one_token(std::int64_t nb, const std::uint8_t* wg0, std::size_t group_bytes, const std::int8_t* a,
                             const float* ad, const std::int32_t* ab, float* y, std::int64_t rows_last, int n_next) {
    constexpr std::size_t kBlock = Q4 ? kQ4Block : kQ8Block;
    const GroupStreams<G> streams(wg0, group_bytes, group_bytes, n_next);
    __m256 acc[G][2];
    for (int g = 0; g < G; ++g) acc[g][0] = acc[g][1] = _mm256_setzero_ps();
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::size_t pair = legacy_quants_at<kBlock>(b & ~std::int64_t{1});
        for (int h = 0; h < 2; ++h) {  // a block pair is read in 4 steps
            streams.template ahead_step<kLegacyPairBytes<kBlock>, 4>(pair, static_cast<int>(b & 1) * 2 + h);
            for (int g = 0; g < G; ++g) {
                const std::uint8_t* wg = wg0 + g * group_bytes;
                const auto* scales = reinterpret_cast<const std::uint16_t*>(wg + legacy_scales_at<kBlock>(b));
                __m256i is;
                half_block_dots<kVnni, Q4, 1>(wg + legacy_quants_at<kBlock>(b) + h * 32, a + b * kQK, ab + b, &is);
                const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + h * kHalfRows)));
                acc[g][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is), _mm256_mul_ps(dw, _mm256_set1_ps(ad[b])), acc[g][h]);
            }
        }
    }
    for (int g = 0; g < G; ++g) {
        for (int h = 0; h < 2; ++h) store_half<1>(&acc[g][h], h, y + g * kPackRows, 0, g + 1 < G ? kPackRows : rows_last);
    }
}

template <bool kVnni, bool Q4>
void gemm(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
          std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* ab,
          std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t n_after) {
    // Pairs of groups: TinyLlama-shaped matvecs on an Intel Xeon VM (EMBER_ISA=avx2), one thread,
    // Q4_0 72 -> 80% of the read, Q8_0 80 -> 87%; two threads Q4_0 70 -> 77%. Four groups
    // measured no better than two.
    // AVX2 Q8_0 (signs applied per token) in tiles of 2 tokens over both halves rather than 4 over
    // each: TinyLlama pp256, EMBER_ISA=avx2, 2 threads, 2 interleaved rounds 97 -> 120 t/s; the
    // other types ran 10-30% slower so.
    constexpr int kMaxT = !kVnni && !Q4 ? 2 : 4;
    gemm_halves<kMaxT>(w, group_bytes, n_groups, n_valid_rows, n_tok, kTokenBlock, true, n_after,
                [&](std::int64_t g, std::int64_t rows_last, int n_next) {
                    groups_one_token<kVnni, Q4, 2>(nb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad,
                                                   ab, y + g * kPackRows, rows_last, n_next);
                },
                [&]<int H, int T>(const std::uint8_t* wg, int half0, std::int64_t g, std::int64_t t, std::int64_t rows) {
                    halves_tokens<kVnni, Q4, H, T>(nb, wg, half0, a + t * kQK, ad + t, ab + t, n_tok,
                                                   y + g * kPackRows + t * ldy, ldy, rows);
                });
}

// Q4_K and Q5_K, halves [half0, half0 + H): per sub-block j, the int16 pair sums of its 32 values
// (8 chunks for Q4_K; two runs of 4 for Q5_K) times the rows' 6-bit scale by one vpmaddwd
// against (sc, sc) pairs; the mins by vpmaddwd of the rows' (m_2p, m_2p+1) against the
// activation's sub-block sums (2p, 2p+1).
template <bool kVnni, bool Q5, int H, int T>
inline void halves_tokens_q45k(std::int64_t nsb, const std::uint8_t* wg, int half0, const std::int8_t* a,
                               const float* ad, const std::int32_t* abs, std::int64_t n_tok, float* y,
                               std::int64_t ldy, std::int64_t rows) {
    constexpr std::size_t kQh = Q5 ? 512 : 0;  // bytes of qh lines before the Q4_K layout
    constexpr int kRun = Q5 && !kVnni ? 4 : 8;  // chunks whose pair sums int16 holds
    const __m256i low = _mm256_set1_epi8(0x0f), bit4 = _mm256_set1_epi8(0x10);
    __m256 acc[H][T];
    for (int h = 0; h < H; ++h) {
        for (int t = 0; t < T; ++t) acc[h][t] = _mm256_setzero_ps();
    }
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* qh = wg + static_cast<std::size_t>(sb) * (kPackQ4KBytes + kQh);
        const std::uint8_t* o = qh + kQh;
        const std::int8_t* at = a + sb * n_tok * 256;
        __m256i isum[H][T];
        for (int h = 0; h < H; ++h) {
            for (int t = 0; t < T; ++t) isum[h][t] = _mm256_setzero_si256();
        }
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) {
            if (half0 == 0) {  // half 1 reads the same lines again
                if ((j & 1) == 0) prefetch_at<512>(o + (j / 2) * 512 + tile_ahead<1>());
                if (j == 7) prefetch_at<kPackQ4KBytes - 2048>(o + 2048 + tile_ahead<1>());
                if (Q5 && j == 1) prefetch_at<kQh>(qh + tile_ahead<1>());
            }
            for (int h = 0; h < H; ++h) {
                const int half = half0 + h;
                const std::uint8_t* q = o + (j / 2) * 512 + half * 32;
                const __m256i sc = row_scales<kVnni>(o + 2048 + 16 * j + 8 * half);
                if constexpr (kVnni) {
                    for (int r0 = 0; r0 < 8; r0 += kRun) {
                        __m256i wv[kRun];
                        for (int c = 0; c < kRun; ++c) {
                            const __m256i x = load8(q + 64 * (r0 + c));
                            wv[c] = _mm256_and_si256((j & 1) ? _mm256_srli_epi16(x, 4) : x, low);
                            if constexpr (Q5) {  // bit j of the qh line to bit 4
                                const __m256i hl = load8(qh + 64 * (r0 + c) + half * 32);
                                const __m256i hb = j <= 4 ? _mm256_slli_epi16(hl, 4 - j) : _mm256_srli_epi16(hl, j - 4);
                                wv[c] = _mm256_or_si256(wv[c], _mm256_and_si256(hb, bit4));
                            }
                        }
                        for (int t = 0; t < T; ++t) {
                            isum[h][t] = scaled_run<kVnni, kRun>(isum[h][t], wv, at + t * 256 + 32 * j + 4 * r0, sc);
                        }
                    }
                } else {
                    // AVX2: chunk by chunk into each token's int16 run; unpacking the run's chunks
                    // first, then token by token, spilled (Q4_K prefill -10-18%, Q5_K -35%).
                    for (int r0 = 0; r0 < 8; r0 += kRun) {
                        __m256i run[T];
                        for (int t = 0; t < T; ++t) run[t] = _mm256_setzero_si256();
                        for (int c = r0; c < r0 + kRun; ++c) {
                            const __m256i x = load8(q + 64 * c);
                            __m256i w = _mm256_and_si256((j & 1) ? _mm256_srli_epi16(x, 4) : x, low);
                            if constexpr (Q5) {
                                const __m256i hl = load8(qh + 64 * c + half * 32);
                                const __m256i hb = j <= 4 ? _mm256_slli_epi16(hl, 4 - j) : _mm256_srli_epi16(hl, j - 4);
                                w = _mm256_or_si256(w, _mm256_and_si256(hb, bit4));
                            }
                            for (int t = 0; t < T; ++t) run[t] = dot_step<false>(run[t], w, at + t * 256 + 32 * j + 4 * c);
                        }
                        for (int t = 0; t < T; ++t) isum[h][t] = _mm256_add_epi32(isum[h][t], _mm256_madd_epi16(run[t], sc));
                    }
                }
            }
        }
        const std::int32_t* bsb = abs + sb * n_tok * 4;
        const float* adb = ad + sb * n_tok;
        for (int h = 0; h < H; ++h) {
            const int half = half0 + h;
            const __m256 dv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 2048 + 256 + 16 * half)));
            const __m256 mv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 2048 + 256 + 32 + 16 * half)));
            __m256i mins[4];
            for (int p = 0; p < 4; ++p) {
                mins[p] = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 2048 + 128 + 32 * p + 16 * half)));
            }
            for (int t = 0; t < T; ++t) {
                __m256i msum = _mm256_madd_epi16(mins[0], _mm256_set1_epi32(bsb[t * 4]));
                for (int p = 1; p < 4; ++p) msum = _mm256_add_epi32(msum, _mm256_madd_epi16(mins[p], _mm256_set1_epi32(bsb[t * 4 + p])));
                const __m256 da = _mm256_set1_ps(adb[t]);
                acc[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[h][t]), _mm256_mul_ps(dv, da), acc[h][t]);
                acc[h][t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(mv, da), acc[h][t]);
            }
        }
    }
    for (int h = 0; h < H; ++h) store_half<T>(acc[h], half0 + h, y, ldy, rows);
}

// Decode (one token) of Q4_K/Q5_K, halves [half0, half0 + H) of G groups (`group_bytes` apart):
// sub-blocks 2k and 2k + 1 are the low and high nibbles of the same lines, so each line (and
// Q5_K's qh line) is loaded once for both; halves_tokens_q45k<.., 1> loads them again for the
// high nibbles. G = 2 gives the core two weight streams sharing each activation chunk, whose
// prefetches run on into the next call's groups (GroupStreams). Per half the same runs of chunks,
// integer sums and float steps: identical results. `rows_last`: the rows of the last group.
template <bool kVnni, bool Q5, int G, int H>
inline void one_token_q45k(std::int64_t nsb, const std::uint8_t* wg0, std::size_t group_bytes, int half0,
                           const std::int8_t* a, const float* ad, const std::int32_t* abs, float* y,
                           std::int64_t rows_last, int n_next) {
    constexpr std::size_t kQh = Q5 ? 512 : 0;
    constexpr int kRun = Q5 && !kVnni ? 4 : 8;
    constexpr int L = G * H;  // lanes: lane l is half half0 + l % H of group l / H
    const __m256i low = _mm256_set1_epi8(0x0f), bit4 = _mm256_set1_epi8(0x10);
    constexpr std::size_t kSuper = kPackQ4KBytes + kQh;
    const GroupStreams<G> streams(wg0, group_bytes, static_cast<std::size_t>(nsb) * kSuper, n_next);
    __m256 acc[L];
    for (int l = 0; l < L; ++l) acc[l] = _mm256_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* qh[G];
        const std::uint8_t* o[G];
        for (int g = 0; g < G; ++g) {
            qh[g] = wg0 + g * group_bytes + static_cast<std::size_t>(sb) * (kPackQ4KBytes + kQh);
            o[g] = qh[g] + kQh;
        }
        const std::int8_t* at = a + sb * 256;
        __m256i isum[L];
        for (int l = 0; l < L; ++l) isum[l] = _mm256_setzero_si256();
        // Unrolled: rolled, Q5_K's shifts by 2k and the prefetch conditions were run-time
        // branches in every chunk (qemu counts 2091 instructions a 16-row superblock, 1474 unrolled).
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {  // sub-blocks 2k (low nibbles) and 2k + 1 (high)
            for (int r0 = 0; r0 < 8; r0 += kRun) {
                __m256i run_lo[L], run_hi[L];
                for (int l = 0; l < L; ++l) run_lo[l] = run_hi[l] = _mm256_setzero_si256();
                const auto chunk = [&](int c) __attribute__((always_inline)) {
                    if (half0 == 0) {  // half 1 alone reads the lines half 0 brought in
                        streams.template ahead_step<kSuper, 32>(static_cast<std::size_t>(sb) * kSuper, 8 * k + c);
                    }
                    for (int l = 0; l < L; ++l) {
                        const int half = half0 + l % H;
                        const __m256i x = in_register(load8(o[l / H] + k * 512 + 64 * c + half * 32));
                        __m256i lo = _mm256_and_si256(x, low), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), low);
                        if constexpr (Q5) {  // bits 2k and 2k + 1 of the qh line to bit 4
                            const __m256i hl = in_register(load8(qh[l / H] + 64 * c + half * 32));
                            const int j = 2 * k;
                            const __m256i hb_lo = j <= 4 ? _mm256_slli_epi16(hl, 4 - j) : _mm256_srli_epi16(hl, j - 4);
                            const __m256i hb_hi = j + 1 <= 4 ? _mm256_slli_epi16(hl, 3 - j) : _mm256_srli_epi16(hl, j - 3);
                            lo = _mm256_or_si256(lo, _mm256_and_si256(hb_lo, bit4));
                            hi = _mm256_or_si256(hi, _mm256_and_si256(hb_hi, bit4));
                        }
                        run_lo[l] = dot_step<kVnni>(run_lo[l], lo, at + 64 * k + 4 * c);
                        run_hi[l] = dot_step<kVnni>(run_hi[l], hi, at + 64 * k + 32 + 4 * c);
                    }
                };
                // Unrolled, each chunk's prefetch lines are known when compiled (AVX2 Q4_K in L2
                // +25%, AVX-VNNI +39%); AVX-VNNI Q5_K (runs of 8, more live registers) ran 17%
                // slower so and keeps the loop.
                if constexpr (Q5 && kVnni) {
                    for (int c = r0; c < r0 + kRun; ++c) chunk(c);
                } else {
#pragma GCC unroll 8
                    for (int c = r0; c < r0 + kRun; ++c) chunk(c);
                }
                for (int l = 0; l < L; ++l) {
                    // The rows' scales where they are used: 2L of them live through the run
                    // beside its 2L chains spilled the chains (AVX2 has 16 registers).
                    const __m256i sc_lo = row_scales<kVnni>(o[l / H] + 2048 + 32 * k + 8 * (half0 + l % H));
                    const __m256i sc_hi = row_scales<kVnni>(o[l / H] + 2048 + 32 * k + 16 + 8 * (half0 + l % H));
                    if constexpr (kVnni) {
                        isum[l] = _mm256_add_epi32(isum[l], _mm256_mullo_epi32(run_lo[l], sc_lo));
                        isum[l] = _mm256_add_epi32(isum[l], _mm256_mullo_epi32(run_hi[l], sc_hi));
                    } else {
                        isum[l] = _mm256_add_epi32(isum[l], _mm256_madd_epi16(run_lo[l], sc_lo));
                        isum[l] = _mm256_add_epi32(isum[l], _mm256_madd_epi16(run_hi[l], sc_hi));
                    }
                }
            }
        }
        const std::int32_t* bsb = abs + sb * 4;
        for (int l = 0; l < L; ++l) {
            const int half = half0 + l % H;
            const std::uint8_t* ol = o[l / H];
            const __m256 dv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ol + 2048 + 256 + 16 * half)));
            const __m256 mv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ol + 2048 + 256 + 32 + 16 * half)));
            __m256i msum = _mm256_setzero_si256();
            for (int p = 0; p < 4; ++p) {
                const __m256i mins = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(ol + 2048 + 128 + 32 * p + 16 * half)));
                const __m256i prod = _mm256_madd_epi16(mins, _mm256_set1_epi32(bsb[p]));
                msum = p == 0 ? prod : _mm256_add_epi32(msum, prod);
            }
            const __m256 da = _mm256_set1_ps(ad[sb]);
            acc[l] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[l]), _mm256_mul_ps(dv, da), acc[l]);
            acc[l] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_mul_ps(mv, da), acc[l]);
        }
    }
    for (int l = 0; l < L; ++l) {
        store_half<1>(acc + l, half0 + l % H, y + (l / H) * kPackRows, 0, l / H + 1 < G ? kPackRows : rows_last);
    }
}

// Decode's pairs of groups, out of line (constants folded in): inlined in the GEMM, the kernel's
// speed hung on how GCC compiled the rest of it, as Q6_K's did (docs/performance.md). One thread,
// `bench_matmul_reps q4_k 1 1 40 32768`: AVX2 +10-13%; TinyLlama Q4_K_M tg48, 2 threads: AVX2
// +4.6% / +5.5%, AVX-VNNI -1.0% / -1.4% (Q5_K_M +3.5% / +0.0%), two sittings.
template <bool kVnni, bool Q5>
[[gnu::noinline, gnu::flatten]] void one_token_pair_q45k(std::int64_t nsb, const std::uint8_t* wg0, std::size_t group_bytes,
                                                         const std::int8_t* a, const float* ad, const std::int32_t* abs,
                                                         float* y, std::int64_t rows_last, int n_next) {
    one_token_q45k<kVnni, Q5, 2, 2>(nsb, wg0, group_bytes, 0, a, ad, abs, y, rows_last, n_next);
}

template <bool kVnni, bool Q5>
void gemm_q45k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
               std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abs,
               std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t n_after) {
    // Pairs of groups: TinyLlama-shaped matvecs on an Intel Xeon VM, one thread, Q4_K 70 -> 78% of
    // the read (AVX-VNNI 75 -> 80%), Q5_K AVX-VNNI 65 -> 74%; two threads Q4_K 66 -> 74%. In L2
    // (compute-bound) AVX2 Q4_K is 3% slower. AVX2 Q5_K (int16 runs of 4, more live registers) is
    // 7% slower there and its decode is nearly compute-bound: Q5_K_M tg at two threads fell 4%,
    // so it keeps one group a call.
    gemm_halves(w, group_bytes, n_groups, n_valid_rows, n_tok, 32, kVnni || !Q5, n_after,
                [&](std::int64_t g, std::int64_t rows_last, int n_next) {
                    one_token_pair_q45k<kVnni, Q5>(nsb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, abs,
                                                   y + g * kPackRows, rows_last, n_next);
                },
                [&]<int H, int T>(const std::uint8_t* wg, int half0, std::int64_t g, std::int64_t t, std::int64_t rows) {
                    if constexpr (T == 1) {
                        if (n_tok == 1) {
                            one_token_q45k<kVnni, Q5, 1, H>(nsb, wg, group_bytes, half0, a, ad, abs, y + g * kPackRows, rows, 0);
                            return;
                        }
                    }
                    halves_tokens_q45k<kVnni, Q5, H, T>(nsb, wg, half0, a + t * 256, ad + t, abs + t * 4, n_tok,
                                                        y + g * kPackRows + t * ldy, ldy, rows);
                });
}

// Q6_K, halves [half0, half0 + H) of one row group, T tokens: AVX-VNNI's tiles, and a lone
// token's group beside decode's pairs. Per 16-value sub-block, 4 chunks of 6-bit weights (a
// nibble of ql joined with 2 bits of qh), their dots (AVX2: pair sums added in int16 two at a
// time) from the bias -32 * sum(a), times the rows' int8 scales into the superblock sum.
template <bool kVnni, int H, int T>
inline void halves_tokens_q6k(std::int64_t nsb, const std::uint8_t* wg, int half0, const std::int8_t* a,
                              const float* ad, const std::int32_t* abias, std::int64_t n_tok, float* y,
                              std::int64_t ldy, std::int64_t rows) {
    const __m256i low = _mm256_set1_epi8(0x0f), high2 = _mm256_set1_epi8(0x30);
    const GroupStreams<1, tile_ahead<1>()> streams(wg, 0, static_cast<std::size_t>(nsb) * kPackQ6KBytes, 0);
    __m256 acc[H][T];
    for (int l = 0; l < H; ++l) {
        for (int t = 0; t < T; ++t) acc[l][t] = _mm256_setzero_ps();
    }
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* o = wg + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::int8_t* at = a + sb * n_tok * 256;
        const std::int32_t* bias = abias + sb * n_tok * 16;
        __m256i isum[H][T];
        for (int l = 0; l < H; ++l) {
            for (int t = 0; t < T; ++t) isum[l][t] = _mm256_setzero_si256();
        }
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) {  // values 16j .. 16j + 15: value half vh, chunks 4jj .. 4jj + 3
            const int vh = j / 8, jj = j % 8;
            if (half0 == 0) {  // half 1 alone reads the lines half 0 brought in
                streams.template ahead_step<kPackQ6KBytes, 16>(static_cast<std::size_t>(sb) * kPackQ6KBytes, j);
            }
            for (int l = 0; l < H; ++l) {
                const int half = half0 + l;
                __m256i wv[4];
                for (int c = 0; c < 4; ++c) {
                    const __m256i ql = load8(o + 64 * (16 * vh + 4 * (jj % 4) + c) + half * 32);
                    const __m256i qh = load8(o + 64 * (32 + 8 * vh + 4 * (jj % 2) + c) + half * 32);
                    const __m256i nib = _mm256_and_si256(jj < 4 ? ql : _mm256_srli_epi16(ql, 4), low);
                    const int shift = 2 * (jj / 2);  // qh bits shift .. shift + 1 to bits 4..5
                    const __m256i hb = shift == 0   ? _mm256_slli_epi16(qh, 4)
                                       : shift == 2 ? _mm256_slli_epi16(qh, 2)
                                       : shift == 4 ? qh
                                                    : _mm256_srli_epi16(qh, 2);
                    wv[c] = _mm256_or_si256(nib, _mm256_and_si256(hb, high2));
                }
                const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(o + 3072 + 16 * j + 8 * half)));
                for (int t = 0; t < T; ++t) {
                    const std::int8_t* x = at + t * 256 + 16 * j;
                    __m256i s = _mm256_set1_epi32(bias[t * 16 + j]);
                    if constexpr (kVnni) {
                        s = dot_run<true, 4>(s, wv, x);
                    } else {  // int16 holds two chunks' pair sums
                        s = dot_run<false, 2>(dot_run<false, 2>(s, wv, x), wv + 2, x + 8);
                    }
                    isum[l][t] = _mm256_add_epi32(isum[l][t], _mm256_mullo_epi32(s, sc));
                }
            }
        }
        const float* adb = ad + sb * n_tok;
        for (int l = 0; l < H; ++l) {
            const __m256 dv = _mm256_cvtph_ps(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 3072 + 256 + 16 * (half0 + l))));
            for (int t = 0; t < T; ++t) {
                acc[l][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[l][t]), _mm256_mul_ps(dv, _mm256_set1_ps(adb[t])), acc[l][t]);
            }
        }
    }
    for (int l = 0; l < H; ++l) store_half<T>(acc[l], half0 + l, y, ldy, rows);
}

/// The 8 rows' signed int8 scales of a half (at p) as (sc, sc) int16 pairs: one vpmaddwd then
/// multiplies both int16 halves of a lane by its row's scale.
inline __m256i pair_scales(const std::uint8_t* p) {
    const __m128i sc = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(sc, sc));
}

// Small batches and prefill of Q6_K on plain AVX2: halves [half0, half0 + H) of one row group,
// T tokens. As AVX-512's group_tokens_q6k, the superblock goes in steps of two sub-blocks, j0 and
// j0 + 4: the low and high nibbles of the same ql lines with bit pairs p and p + 2 of the same qh
// lines, so each ql line is loaded once and each qh line twice (sub-block by sub-block: twice and
// four times). No int32 chain a sub-block and no vpmulld: two chunks' pair sums add in int16 (at
// most 32004) and one vpmaddwd against the rows' (sc, sc) pairs adds them, times the scale, into
// the superblock sum, as Q4_K does; the bias b = -32 * sum(a) joins by the same vpmaddwd, split in
// two int16 halves (b >> 1, b - (b >> 1)). The sums stay in order (keep_order), the bias pairs
// are broadcast from memory and the float sums live in memory between superblocks: otherwise GCC
// spilled. The same exact integer sums, then the same float steps, as the scalar twin.
// TinyLlama Q6_K, `EMBER_ISA=avx2`, 2 threads, against halves_tokens_q6k: pp16 +6.8%, pp64
// +5.8%, pp512 +16.4%, `--parallel 4` +4.5% (docs/performance.md). Out of line, so that it does
// not move how GCC compiles the rest of the GEMM.
template <int H, int T>
[[gnu::noinline]] void halves_batch_q6k(std::int64_t nsb, const std::uint8_t* wg, int half0, const std::int8_t* a,
                                        const float* ad, const std::int32_t* abias, std::int64_t n_tok, float* y,
                                        std::int64_t ldy, std::int64_t rows) {
    const __m256i low = _mm256_set1_epi8(0x0f), high2 = _mm256_set1_epi8(0x30);
    const GroupStreams<1, tile_ahead<1>()> streams(wg, 0, static_cast<std::size_t>(nsb) * kPackQ6KBytes, 0);
    alignas(32) float acc[H][T][8] = {};
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        asm volatile("" ::: "memory");  // acc stays in memory
        const std::uint8_t* o = wg + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::int8_t* at = a + sb * n_tok * 256;
        alignas(32) std::int32_t bias_pairs[T][16];
        for (int t = 0; t < T; ++t) {
            for (int k = 0; k < 2; ++k) {
                const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(abias + (sb * n_tok + t) * 16 + 8 * k));
                const __m256i lo = _mm256_srai_epi32(b, 1);
                const __m256i pair = _mm256_blend_epi16(lo, _mm256_slli_epi32(_mm256_sub_epi32(b, lo), 16), 0xAA);
                _mm256_store_si256(reinterpret_cast<__m256i*>(bias_pairs[t] + 8 * k), pair);
            }
        }
        asm volatile("" ::: "memory");  // broadcast the pairs from memory, not from registers
        __m256i isum[H][T];
        for (int l = 0; l < H; ++l) {
            for (int t = 0; t < T; ++t) isum[l][t] = _mm256_setzero_si256();
        }
#pragma GCC unroll 16
        for (int step = 0; step < 16; ++step) {
            const int h = step / 8, m = step / 4 % 2, p = step / 2 % 2, q = step % 2;  // chunks 2q, 2q + 1
            const int j0 = 8 * h + m + 2 * p;  // sub-blocks j0 and j0 + 4
            if (half0 == 0) {  // half 1 alone reads the lines half 0 brought in
                streams.template ahead_step<kPackQ6KBytes, 16>(static_cast<std::size_t>(sb) * kPackQ6KBytes, step);
            }
            for (int l = 0; l < H; ++l) {
                const int half = half0 + l;
                __m256i w[2][2];  // [chunk][sub-block j0, j0 + 4]
                for (int cc = 0; cc < 2; ++cc) {
                    const int c = 2 * q + cc;
                    const __m256i ql = in_register(load8(o + 64 * (16 * h + 4 * (m + 2 * p) + c) + 32 * half));
                    const __m256i qh = in_register(load8(o + 64 * (32 + 8 * h + 4 * m + c) + 32 * half));
                    const __m256i hb_lo = p ? _mm256_slli_epi16(qh, 2) : _mm256_slli_epi16(qh, 4);
                    const __m256i hb_hi = p ? _mm256_srli_epi16(qh, 2) : qh;
                    w[cc][0] = _mm256_or_si256(_mm256_and_si256(ql, low), _mm256_and_si256(hb_lo, high2));
                    w[cc][1] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql, 4), low), _mm256_and_si256(hb_hi, high2));
                }
                const __m256i sc_a = pair_scales(o + 3072 + 16 * j0 + 8 * half);
                const __m256i sc_b = pair_scales(o + 3072 + 16 * (j0 + 4) + 8 * half);
                for (int t = 0; t < T; ++t) {
                    const std::int8_t* x = at + t * 256 + 16 * j0 + 8 * q;
                    const __m256i s_a = _mm256_add_epi16(_mm256_maddubs_epi16(w[0][0], bcast4(x)),
                                                         _mm256_maddubs_epi16(w[1][0], bcast4(x + 4)));
                    const __m256i s_b = _mm256_add_epi16(_mm256_maddubs_epi16(w[0][1], bcast4(x + 64)),
                                                         _mm256_maddubs_epi16(w[1][1], bcast4(x + 68)));
                    __m256i sum = _mm256_add_epi32(isum[l][t], _mm256_madd_epi16(s_a, sc_a));
                    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(s_b, sc_b));
                    if (q == 0) {
                        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(sc_a, _mm256_set1_epi32(bias_pairs[t][j0])));
                        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(sc_b, _mm256_set1_epi32(bias_pairs[t][j0 + 4])));
                    }
                    keep_order(sum);
                    isum[l][t] = sum;
                }
            }
        }
        const float* adb = ad + sb * n_tok;
        for (int l = 0; l < H; ++l) {
            const __m256 dv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 3072 + 256 + 16 * (half0 + l))));
            for (int t = 0; t < T; ++t) {
                const __m256 sum = _mm256_cvtepi32_ps(isum[l][t]);
                _mm256_store_ps(acc[l][t], _mm256_fmadd_ps(sum, _mm256_mul_ps(dv, _mm256_set1_ps(adb[t])), _mm256_load_ps(acc[l][t])));
            }
        }
    }
    for (int l = 0; l < H; ++l) {
        __m256 out[T];
        for (int t = 0; t < T; ++t) out[t] = _mm256_load_ps(acc[l][t]);
        store_half<T>(out, half0 + l, y, ldy, rows);
    }
}

// Decode (one token) of Q6_K: both halves of two row groups (lane l: half l % 2 of group l / 2),
// as AVX-512's one_token_q6k orders it: a quarter (h, m) of the superblock is the four sub-blocks
// j0 + 2i (j0 = 8h + m) that share four qh lines, each chunk's ql lines of j0 and j0 + 2 loaded
// once for low and high nibbles (the old kernel, sub-block by sub-block, loaded them twice and
// the qh lines four times). The four quarters run as a loop, not unrolled: fully unrolled (16
// sub-blocks, ~2800 instructions a superblock) this kernel streamed 15.6 GB/s where the old one
// reached 26-27 only through how GCC happened to compile it inlined in the GEMM (any change to
// the GEMM cost decode up to 37%). This one, out of line, holds its speed on its own:
// `bench_matmul_reps q6_k 1 1 40 32768`, one thread: AVX2 26.8 -> 27.5 GB/s, AVX-VNNI 16.5 ->
// 32.8; in L2 +7.3% / +2.8%. Same integer sums and float steps as the scalar twin.
template <bool kVnni>
[[gnu::noinline]] void one_token_q6k(std::int64_t nsb, const std::uint8_t* wg0, std::size_t group_bytes,
                                     const std::int8_t* a, const float* ad, const std::int32_t* abias, float* y,
                                     std::int64_t rows_last, int n_next) {
    constexpr int G = 2, L = 4;  // lane l: half l % 2 of group l / 2
    const __m256i low = _mm256_set1_epi8(0x0f), high2 = _mm256_set1_epi8(0x30);
    const GroupStreams<G> streams(wg0, group_bytes, static_cast<std::size_t>(nsb) * kPackQ6KBytes, n_next);
    __m256 acc[L];
    for (int l = 0; l < L; ++l) acc[l] = _mm256_setzero_ps();
    for (std::int64_t sb = 0; sb < nsb; ++sb) {
        const std::uint8_t* o[G];
        for (int g = 0; g < G; ++g) o[g] = wg0 + g * group_bytes + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::int8_t* at = a + sb * 256;
        const std::int32_t* bias = abias + sb * 16;
        __m256i isum[L];
        for (int l = 0; l < L; ++l) isum[l] = _mm256_setzero_si256();
        int n_quarters = 4;
        asm("" : "+r"(n_quarters));  // a loop, not 4 unrolled copies
        for (int hm = 0; hm < n_quarters; ++hm) {
            const int h = hm / 2, m = hm % 2, j0 = 8 * h + m;  // sub-blocks j0 + 2i, i < 4
#pragma GCC unroll 4
            for (int l = 0; l < L; ++l) {
                const std::uint8_t* ol = o[l / 2];
                const int half = l % 2;
                __m256i s[4], s16[4];
                for (int i = 0; i < 4; ++i) s[i] = _mm256_set1_epi32(bias[j0 + 2 * i]);
#pragma GCC unroll 4
                for (int c = 0; c < 4; ++c) {
                    if (l == 0) streams.template ahead_step<kPackQ6KBytes, 16>(static_cast<std::size_t>(sb) * kPackQ6KBytes, 4 * hm + c);
                    const __m256i ql0 = in_register(load8(ol + 64 * (16 * h + 4 * m + c) + 32 * half));
                    const __m256i ql2 = in_register(load8(ol + 64 * (16 * h + 4 * (m + 2) + c) + 32 * half));
                    const __m256i qh = in_register(load8(ol + 64 * (32 + 8 * h + 4 * m + c) + 32 * half));
                    __m256i w[4];  // sub-blocks j0, j0 + 2, j0 + 4, j0 + 6
                    q6k_quads(ql0, ql2, qh, low, high2, w);
                    for (int i = 0; i < 4; ++i) {
                        const std::int8_t* x = at + 16 * (j0 + 2 * i) + 4 * c;
                        if constexpr (kVnni) {
                            s[i] = dot_run<true, 1>(s[i], w + i, x);
                        } else if (c % 2 == 0) {
                            s16[i] = _mm256_maddubs_epi16(w[i], bcast4(x));
                        } else {
                            s16[i] = _mm256_add_epi16(s16[i], _mm256_maddubs_epi16(w[i], bcast4(x)));
                            s[i] = _mm256_add_epi32(s[i], _mm256_madd_epi16(s16[i], _mm256_set1_epi16(1)));
                        }
                    }
                }
                for (int i = 0; i < 4; ++i) {
                    const __m256i sc = _mm256_cvtepi8_epi32(
                        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(ol + 3072 + 16 * (j0 + 2 * i) + 8 * half)));
                    isum[l] = _mm256_add_epi32(isum[l], _mm256_mullo_epi32(s[i], sc));
                }
            }
        }
        const __m256 da = _mm256_set1_ps(ad[sb]);
        for (int l = 0; l < L; ++l) {
            const __m256 dv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o[l / 2] + 3072 + 256 + 16 * (l % 2))));
            acc[l] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[l]), _mm256_mul_ps(dv, da), acc[l]);
        }
    }
    for (int l = 0; l < L; ++l) store_half<1>(acc + l, l % 2, y + (l / 2) * kPackRows, 0, l / 2 + 1 < G ? kPackRows : rows_last);
}

template <bool kVnni>
void gemm_q6k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
              std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abias,
              std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t n_after) {
    // Pairs of groups: TinyLlama-shaped matvecs on an Intel Xeon VM, of the read: one thread
    // 65 -> 81% (AVX-VNNI 71 -> 82%), two threads 57 -> 75%; in L2 +32%.
    gemm_halves(w, group_bytes, n_groups, n_valid_rows, n_tok, 32, true, n_after,
                [&](std::int64_t g, std::int64_t rows_last, int n_next) {
                    one_token_q6k<kVnni>(nsb, w + static_cast<std::size_t>(g) * group_bytes, group_bytes, a, ad, abias,
                                         y + g * kPackRows, rows_last, n_next);
                },
                [&]<int H, int T>(const std::uint8_t* wg, int half0, std::int64_t g, std::int64_t t, std::int64_t rows) {
                    if constexpr (!kVnni && T >= 2) {
                        halves_batch_q6k<H, T>(nsb, wg, half0, a + t * 256, ad + t, abias + t * 16, n_tok,
                                               y + g * kPackRows + t * ldy, ldy, rows);
                        return;
                    }
                    halves_tokens_q6k<kVnni, H, T>(nsb, wg, half0, a + t * 256, ad + t, abias + t * 16, n_tok,
                                                   y + g * kPackRows + t * ldy, ldy, rows);
                });
}

/// The GEMMs of one instantiation, named as EMBER_DEFINE_PACKED (isa_kernels.hpp) takes them.
template <bool kVnni>
struct Gemms {
    template <bool Q4>
    static constexpr auto legacy = gemm<kVnni, Q4>;
    template <bool Q5>
    static constexpr auto q45k = gemm_q45k<kVnni, Q5>;
    static constexpr auto q6k = gemm_q6k<kVnni>;
};

}  // namespace packed_avx2
}  // namespace
}  // namespace ember::kernels

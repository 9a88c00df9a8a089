// AVX2 kernels of the repacked 16-row Q4_0 and Q8_0 layouts (kernels/packed.hpp), for CPUs
// without AVX-512: each 16-row group is two halves of 8 rows (the 32-byte halves of every 64-byte
// chunk). vpdpbusd is emulated exactly by vpmaddubsw + vpmaddwd: unsigned nibbles (0..15) times
// signed activation bytes give pair sums of at most 2 * 15 * 128, far from int16 saturation;
// Q8_0 multiplies |w| by a * sign(w) instead (at most 2 * 128 * 127). Up to 4
// tokens share each loaded chunk; tokens go in blocks of 64 so their activations stay in L2 while
// the thread's row groups stream by. Kernel code only: no STL. Bit-identical to the scalar twin
// (packed_scalar.cpp): exact integer block sums, then acc = fma(float(sum), dw * da, acc) block
// after block.
#include <immintrin.h>

#include <cstring>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/packed_driver-inl.hpp"
#include "kernels/isa/x86_common-inl.hpp"
#include "kernels/packed_isa.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels::avx2 {
namespace {

constexpr std::int64_t kTokenBlock = 64;
constexpr int kHalfRows = kPackRows / 2;
constexpr std::size_t kQ4Block = 4 * 64;  // bytes of one packed Q4_0 block of 16 rows
constexpr std::size_t kQ8Block = 8 * 64;  // ... of Q8_0

inline __m256i bcast4(const std::int8_t* p) {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

// Rows [8 * half, 8 * half + 8) of one group against T tokens; `rows` of them are stored.
template <bool Q4, int T>
inline void half_tokens(std::int64_t nb, const std::uint8_t* wg, int half, const std::int8_t* a,
                        const float* ad, const std::int32_t* ab, std::int64_t n_tok, float* y,
                        std::int64_t ldy, std::int64_t rows) {
    constexpr std::size_t kBlock = Q4 ? kQ4Block : kQ8Block;
    const auto* scales = reinterpret_cast<const std::uint16_t*>(wg + static_cast<std::size_t>(nb) * kBlock);
    const __m256i low = _mm256_set1_epi8(0x0f);
    const __m256i bias128 = _mm256_set1_epi8(static_cast<char>(0x80));
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (std::int64_t b = 0; b < nb; ++b) {
        const std::uint8_t* q = wg + static_cast<std::size_t>(b) * kBlock + half * 32;
        if (half == 0) prefetch_ahead<kBlock>(q);  // half 1 reads the same lines again
        const std::int8_t* ab8 = a + b * n_tok * kQK;
        __m256i is[T];
        if constexpr (Q4) {
            for (int t = 0; t < T; ++t) is[t] = _mm256_set1_epi32(ab[b * n_tok + t]);
            for (int m = 0; m < 4; ++m) {
                const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 64 * m));
                const __m256i lo = _mm256_and_si256(x, low);                          // values 4m..4m+3
                const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), low);   // values 16+4m..
                for (int t = 0; t < T; ++t) {
                    const std::int8_t* at = ab8 + t * kQK;
                    const __m256i plo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, bcast4(at + 4 * m)), ones);
                    const __m256i phi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, bcast4(at + 16 + 4 * m)), ones);
                    is[t] = _mm256_add_epi32(is[t], _mm256_add_epi32(plo, phi));
                }
            }
        } else {
            // The signed weights (w + 128 stored) against the activations directly, so the
            // bias (-128 * sum(a)) is not needed: |w| <= 128 times a * sign(w), |a| <= 127.
            for (int t = 0; t < T; ++t) is[t] = _mm256_setzero_si256();
            for (int c = 0; c < 8; ++c) {
                const __m256i w = _mm256_xor_si256(
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 64 * c)), bias128);
                const __m256i mag = _mm256_abs_epi8(w);  // -128 gives 0x80: 128 unsigned
                for (int t = 0; t < T; ++t) {
                    const __m256i signed_a = _mm256_sign_epi8(bcast4(ab8 + t * kQK + 4 * c), w);
                    is[t] = _mm256_add_epi32(is[t], _mm256_madd_epi16(_mm256_maddubs_epi16(mag, signed_a), ones));
                }
            }
        }
        const __m256 dw = _mm256_cvtph_ps(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + b * kPackRows + half * kHalfRows)));
        for (int t = 0; t < T; ++t) {
            const __m256 prod = _mm256_mul_ps(dw, _mm256_set1_ps(ad[b * n_tok + t]));
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(is[t]), prod, acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) {
        if (rows == kHalfRows) {
            _mm256_storeu_ps(y + t * ldy, acc[t]);
        } else {
            alignas(32) float out[kHalfRows];
            _mm256_store_ps(out, acc[t]);
            for (std::int64_t r = 0; r < rows; ++r) y[t * ldy + r] = out[r];
        }
    }
}

template <bool Q4, int T>
inline void group_tokens(std::int64_t nb, const std::uint8_t* wg, const std::int8_t* a, const float* ad,
                         const std::int32_t* ab, std::int64_t n_tok, float* y, std::int64_t ldy,
                         std::int64_t rows) {
    for (int half = 0; half < 2 && rows > half * kHalfRows; ++half) {
        const std::int64_t left = rows - half * kHalfRows;
        half_tokens<Q4, T>(nb, wg, half, a, ad, ab, n_tok, y + half * kHalfRows, ldy,
                       left < kHalfRows ? left : kHalfRows);
    }
}

template <bool Q4>
void gemm(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
          std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* ab,
          std::int64_t n_tok, float* y, std::int64_t ldy) {
    packed_for_each<4>(n_groups, n_valid_rows, n_tok, kTokenBlock,
                       [&]<int T>(std::int64_t g, std::int64_t rows, std::int64_t t) {
                           group_tokens<Q4, T>(nb, w + static_cast<std::size_t>(g) * group_bytes, a + t * kQK,
                                               ad + t, ab + t, n_tok, y + g * kPackRows + t * ldy, ldy, rows);
                       });
}

}  // namespace

EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q4_0) {
    gemm<true>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy);
}

EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q8_0) {
    gemm<false>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy);
}

}  // namespace ember::kernels::avx2

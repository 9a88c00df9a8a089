// Scalar kernels of the repacked 16-row layouts (kernels/packed.hpp): the oracle of the SIMD
// versions, with the same arithmetic (exact integer block sums, then per row
// acc = fma(float(sum), dw * da, acc) block after block), so results are bit-identical.
#include <cmath>
#include <cstring>

#include "kernels/fp16.hpp"
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/packed_isa.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels::scalar {
namespace {

// Unsigned weight value k (0..31) of row r in one packed block.
template <bool Q4>
inline int weight(const std::uint8_t* q, int r, int k) {
    if constexpr (Q4) {
        const int m = (k % 16) / 4, i = k % 4;
        const std::uint8_t byte = q[m * 64 + r * 4 + i];
        return k < 16 ? (byte & 0x0f) : (byte >> 4);
    } else {
        return q[(k / 4) * 64 + r * 4 + k % 4];
    }
}

// Every output the packed GEMM contract names: y[t * ldy + g * 16 + r] = dot(group g's bytes,
// row r, token t) for the groups' valid rows and every token.
template <class Dot>
void for_each_output(const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups, std::int64_t n_valid_rows,
                     std::int64_t n_tok, float* y, std::int64_t ldy, Dot dot) {
    for (std::int64_t g = 0; g < n_groups; ++g) {
        const std::uint8_t* wg = w + static_cast<std::size_t>(g) * group_bytes;
        for (int r = 0; r < kPackRows && g * kPackRows + r < n_valid_rows; ++r) {
            for (std::int64_t t = 0; t < n_tok; ++t) y[t * ldy + g * kPackRows + r] = dot(wg, r, t);
        }
    }
}

template <bool Q4>
void gemm(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
          std::int64_t n_valid_rows, const std::int8_t* a, const float* ad,
          const std::int32_t* abias, std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
    constexpr std::size_t block_bytes = Q4 ? 4 * 64 : 8 * 64;
    for_each_output(w, group_bytes, n_groups, n_valid_rows, n_tok, y, ldy, [&](const std::uint8_t* wg, int r, std::int64_t t) {
        float acc = 0.0f;
        for (std::int64_t b = 0; b < nb; ++b) {
            const std::uint8_t* q = wg + legacy_quants_at<block_bytes>(b);
            const auto* scales = reinterpret_cast<const std::uint16_t*>(wg + legacy_scales_at<block_bytes>(b));
            const std::int8_t* qa = a + (b * n_tok + t) * kQK;
            std::int32_t sum = abias[b * n_tok + t];
            for (int k = 0; k < kQK; ++k) sum += weight<Q4>(q, r, k) * qa[k];
            const float prod = fp16_to_fp32(scales[r]) * ad[b * n_tok + t];
            acc = std::fma(static_cast<float>(sum), prod, acc);
        }
        return acc;
    });
}

// Q4_K and Q5_K (kernels/packed.hpp): per row and superblock, isum = sum_j sc_j * sum_v q * a and
// msum = sum_j m_j * bsum_j exactly, then acc = fma(isum, d * da, acc), acc = fma(msum, -(dmin * da), acc).
// Q5_K's fifth bits come first (bit j of qh line v / 4 for value v of sub-block j).
template <bool Q5>
void gemm_q45k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
               std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abs,
               std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
    constexpr std::size_t kQh = Q5 ? 512 : 0;  // bytes of qh lines before the Q4_K layout
    for_each_output(w, group_bytes, n_groups, n_valid_rows, n_tok, y, ldy, [&](const std::uint8_t* wg, int r, std::int64_t t) {
        float acc = 0.0f;
        for (std::int64_t sb = 0; sb < nsb; ++sb) {
            const std::uint8_t* qh = wg + static_cast<std::size_t>(sb) * (kPackQ4KBytes + kQh);
            const std::uint8_t* o = qh + kQh;
            const std::int8_t* at = a + (sb * n_tok + t) * 256;
            std::int32_t isum = 0, msum = 0;
            for (int j = 0; j < 8; ++j) {
                std::int32_t s = 0;
                for (int v = 0; v < 32; ++v) {
                    const std::size_t lane = (v / 4) * 64 + r * 4 + v % 4;
                    const std::uint8_t byte = o[(j / 2) * 512 + lane];
                    int q = (j % 2) ? (byte >> 4) : (byte & 0x0f);
                    if constexpr (Q5) q |= ((qh[lane] >> j) & 1) << 4;
                    s += q * at[32 * j + v];
                }
                isum += o[2048 + j * 16 + r] * s;
            }
            const auto* bs = reinterpret_cast<const std::int16_t*>(abs + (sb * n_tok + t) * 4);
            for (int j = 0; j < 8; ++j) msum += o[2048 + 128 + (j / 2) * 32 + r * 2 + j % 2] * bs[j];
            std::uint16_t dh, mh;
            std::memcpy(&dh, o + 2048 + 256 + r * 2, 2);
            std::memcpy(&mh, o + 2048 + 256 + 32 + r * 2, 2);
            const float da = ad[sb * n_tok + t];
            acc = std::fma(static_cast<float>(isum), fp16_to_fp32(dh) * da, acc);
            acc = std::fma(static_cast<float>(msum), -(fp16_to_fp32(mh) * da), acc);
        }
        return acc;
    });
}

// Q6_K (kernels/packed.hpp): per row and superblock, isum = sum_j sc_j * (bias_j + sum_v q * a)
// with q in 0..63 and bias_j = -32 * (sub-block j's activation sum), exactly; then
// acc = fma(isum, d * da, acc).

// Unsigned 6-bit value v (0..255) of row r in one packed superblock.
inline int weight_q6k(const std::uint8_t* o, int r, int v) {
    const int h = v / 128, k = (v % 128) / 4, i = v % 4;
    const std::uint8_t ql = o[(16 * h + k % 16) * 64 + r * 4 + i];
    const std::uint8_t qh = o[(32 + 8 * h + k % 8) * 64 + r * 4 + i];
    return (k < 16 ? (ql & 0x0f) : (ql >> 4)) | (((qh >> (2 * (k / 8))) & 3) << 4);
}

void gemm_q6k(std::int64_t nsb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
              std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* abias,
              std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t /*n_after*/) {
    for_each_output(w, group_bytes, n_groups, n_valid_rows, n_tok, y, ldy, [&](const std::uint8_t* wg, int r, std::int64_t t) {
        float acc = 0.0f;
        for (std::int64_t sb = 0; sb < nsb; ++sb) {
            const std::uint8_t* o = wg + static_cast<std::size_t>(sb) * kPackQ6KBytes;
            const std::int8_t* at = a + (sb * n_tok + t) * 256;
            const std::int32_t* bias = abias + (sb * n_tok + t) * 16;
            std::int32_t isum = 0;
            for (int j = 0; j < 16; ++j) {
                std::int32_t s = bias[j];
                for (int v = 16 * j; v < 16 * j + 16; ++v) s += weight_q6k(o, r, v) * at[v];
                isum += static_cast<std::int8_t>(o[3072 + j * 16 + r]) * s;
            }
            std::uint16_t dh;
            std::memcpy(&dh, o + 3072 + 256 + r * 2, 2);
            acc = std::fma(static_cast<float>(isum), fp16_to_fp32(dh) * ad[sb * n_tok + t], acc);
        }
        return acc;
    });
}

}  // namespace

EMBER_DEFINE_PACKED(gemm, gemm_q45k, gemm_q6k)

}  // namespace ember::kernels::scalar

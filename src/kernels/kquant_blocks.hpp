// K-quant block layouts (ggml's ggml-common.h, QK_K = 256): byte-for-byte what GGUF files hold.
// Plain C-like header (no STL) so the per-ISA kernel TUs can include it: every helper here has
// internal linkage (`static inline`), so no copy compiled with AVX-512 flags can leak to callers.
// See docs/quant_formats_kquants.md for the bit layouts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ember::kernels {

inline constexpr int kQK_K = 256;          ///< Values per K-quant superblock.
inline constexpr int kKScaleBytes = 12;    ///< 8 six-bit scales + 8 six-bit mins, packed.

/// 4.5 bits/weight: w = d*sc[j]*q - dmin*m[j], q in [0,15], 8 sub-blocks of 32.
struct BlockQ4K {
    std::uint16_t d;                     ///< fp16 super-scale of the 6-bit scales
    std::uint16_t dmin;                  ///< fp16 super-scale of the 6-bit mins
    std::uint8_t scales[kKScaleBytes];   ///< packed (see unpack_scale_min_k4)
    std::uint8_t qs[kQK_K / 2];          ///< qs[32k+l]: low nibble = value 64k+l, high = 64k+32+l
};
static_assert(sizeof(BlockQ4K) == 144, "Q4_K block must be 144 bytes");

/// 5.5 bits/weight: as Q4_K with a fifth bit per value in qh.
struct BlockQ5K {
    std::uint16_t d;
    std::uint16_t dmin;
    std::uint8_t scales[kKScaleBytes];
    std::uint8_t qh[kQK_K / 8];          ///< bit 2k of qh[l] = high bit of 64k+l, bit 2k+1 of 64k+32+l
    std::uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5K) == 176, "Q5_K block must be 176 bytes");

/// 6.5625 bits/weight: w = d*scales[j]*(q - 32), q in [0,63], 16 sub-blocks of 16.
struct BlockQ6K {
    std::uint8_t ql[kQK_K / 2];          ///< low 4 bits
    std::uint8_t qh[kQK_K / 4];          ///< high 2 bits
    std::int8_t scales[kQK_K / 16];      ///< signed 8-bit sub-block scales
    std::uint16_t d;                     ///< fp16 super-scale
};
static_assert(sizeof(BlockQ6K) == 210, "Q6_K block must be 210 bytes");

/// Activations for the K-quant dot products: x ~= d*qs, bsums[j] = sum of qs[16j..16j+15].
struct BlockQ8K {
    float d;
    std::int8_t qs[kQK_K];
    std::int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8K) == 292, "Q8_K block must be 292 bytes");

static_assert(offsetof(BlockQ4K, scales) == offsetof(BlockQ5K, scales) &&
              offsetof(BlockQ4K, dmin) == offsetof(BlockQ5K, dmin), "Q4_K/Q5_K share the head");

/// Unaligned loads for kernels that address blocks by byte offset (rows may start anywhere).
static inline std::uint16_t kq_ld_u16(const std::uint8_t* p) {
    std::uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
static inline float kq_ld_f32(const std::uint8_t* p) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

/// IEEE half -> float, exact (subnormals, inf and NaN included). Bit manipulation only.
static inline float kq_fp16_to_fp32(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exp = (h >> 10) & 0x1Fu;
    std::uint32_t mant = h & 0x3FFu;
    std::uint32_t bits;
    if (exp == 0x1Fu) {
        bits = sign | 0x7F800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {  // subnormal: normalize
        exp = 113u;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --exp;
        }
        bits = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

/// The 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes (ggml's
/// get_scale_min_k4): j < 4 in the low 6 bits of bytes j and j+4; j >= 4 split between the
/// nibbles of byte j+4 and the top 2 bits of bytes j-4 (scale) and j (min).
static inline void kq_scale_min_k4(int j, const std::uint8_t* q, std::uint8_t* sc,
                                   std::uint8_t* m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = static_cast<std::uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<std::uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/// All 8 scales and 8 mins at once, with word operations, as four little-endian words: bytes
/// 0..7 of w are the scales, 8..15 the mins.
static inline void kq_unpack_scale_words_k4(const std::uint8_t* q, std::uint32_t out[4]) {
    std::uint32_t w[3];
    std::memcpy(w, q, 12);
    out[0] = w[0] & 0x3F3F3F3Fu;
    out[1] = (w[2] & 0x0F0F0F0Fu) | (((w[0] >> 6) & 0x03030303u) << 4);
    out[2] = w[1] & 0x3F3F3F3Fu;
    out[3] = ((w[2] >> 4) & 0x0F0F0F0Fu) | (((w[1] >> 6) & 0x03030303u) << 4);
}

/// All 8 scales (out[0..7]) and 8 mins (out[8..15]) at once.
static inline void kq_unpack_scales_k4(const std::uint8_t* q, std::uint8_t* out) {
    std::uint32_t w[4];
    kq_unpack_scale_words_k4(q, w);
    std::memcpy(out, w, 16);
}

}  // namespace ember::kernels

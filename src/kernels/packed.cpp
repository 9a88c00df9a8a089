#include "kernels/packed.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/fp16.hpp"
#include "kernels/packed_isa.hpp"
#include "kernels/kquant_blocks.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels {
namespace {

// The packed layouts interleave 16 rows in 4-byte words. Each block (or super-block) of the
// group is assembled whole before it is stored, so the fresh destination is written once, in
// order (writing it word by word in place ran 2x slower): on x86 in SSE registers, elsewhere
// (or into a destination not 16-byte aligned) in a local buffer, row by row.

// Stores an assembled block into the packed copy, which is far larger than the caches: streaming
// stores write it without first reading each line (on the reference VM no faster than plain
// stores, whose time there went to faulting the fresh pages in). Each pack_group call ends with
// a fence so its stores are visible once the task that ran it is seen to finish. In 16-byte pieces, not
// one memcpy of the local array: with the quants read in place, GCC 12 at -O3 took the packers
// for functions without side effects and dropped their calls (the kernel tests caught it).
template <std::size_t kBytes>
void store_block(std::uint8_t* dst, const std::uint8_t* block) noexcept {
    static_assert(kBytes % 16 == 0);
#if defined(__SSE2__)
    if (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) {
        for (std::size_t i = 0; i < kBytes; i += 16)
            _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + i)));
        return;
    }
#endif
    for (std::size_t i = 0; i < kBytes; i += 16) std::memcpy(dst + i, block + i, 16);
}

void end_stores() noexcept {
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

#if defined(__SSE2__)
// Streams the first kWords 4-byte words of the group's 16 rows transposed: word w of row r to
// out + 64 * w + 4 * r, XORed with flip; a null row gives zeros. Assembled in registers (4x4
// transposes of 16-byte chunks): a local block written 4 bytes at a time and read back 16 at a
// time stalls on store forwarding at every read, which took most of the packing time. Four lines
// are completed before the next four are started, so the streaming stores fill whole lines in
// the few write-combining buffers a core has.
template <int kWords>
void stream_word_columns(const std::uint8_t* const rows[kPackRows], __m128i flip, std::uint8_t* out) noexcept {
    const auto stream = [](std::uint8_t* p, __m128i v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), v); };
    for (int c = 0; c < kWords / 4; ++c) {
        std::uint8_t* line = out + static_cast<std::size_t>(c) * 256;
        for (int r4 = 0; r4 < kPackRows / 4; ++r4) {
            __m128i x[4];
            for (int j = 0; j < 4; ++j) {
                const std::uint8_t* row = rows[4 * r4 + j];
                x[j] = row != nullptr ? _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 16 * c)), flip)
                                      : _mm_setzero_si128();
            }
            const __m128i t0 = _mm_unpacklo_epi32(x[0], x[1]), t1 = _mm_unpacklo_epi32(x[2], x[3]);
            const __m128i t2 = _mm_unpackhi_epi32(x[0], x[1]), t3 = _mm_unpackhi_epi32(x[2], x[3]);
            stream(line + 16 * r4, _mm_unpacklo_epi64(t0, t1));
            stream(line + 64 + 16 * r4, _mm_unpackhi_epi64(t0, t1));
            stream(line + 128 + 16 * r4, _mm_unpacklo_epi64(t2, t3));
            stream(line + 192 + 16 * r4, _mm_unpackhi_epi64(t2, t3));
        }
    }
}
#endif

// Legacy rows (Q4_0, Q8_0): line w of a packed block (64 bytes) holds quant word w (4 bytes) of
// the 16 rows in order, each byte XORed with kFlip (Q8_0's int8 quants become offset-binary);
// absent rows of a partial group stay zero. Blocks go in pairs, each pair followed by the rows'
// fp16 scales of its two blocks (legacy_quants_at / legacy_scales_at).
template <class Block, std::uint8_t kFlip>
struct LegacyPacker {
    static_assert(offsetof(Block, d) == 0 && offsetof(Block, qs) == sizeof(std::uint16_t));
    static constexpr int kWords = static_cast<int>(sizeof(Block::qs) / 4);  // quant words per row
    static constexpr std::size_t kBlockBytes = static_cast<std::size_t>(kWords) * 64;

    static std::size_t group_bytes(std::int64_t n_cols) noexcept {
        return static_cast<std::size_t>((n_cols / kQK + 1) / 2) * kLegacyPairBytes<kBlockBytes>;
    }

    static void pack(const std::uint8_t* src, std::size_t stride, std::int64_t n, std::int64_t n_cols,
                     std::uint8_t* dst) noexcept {
#if defined(__SSE2__)
        if (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) return pack_sse(src, stride, n, n_cols, dst);
#endif
        const std::int64_t nb = n_cols / kQK;
        for (std::int64_t b = 0; b < nb; ++b) {
            alignas(64) std::uint8_t q[kBlockBytes] = {};
            std::uint16_t d[kPackRows] = {};
            // Quants read in place: copying the odd-sized block to the stack first made the 4-byte
            // reads straddle two stores, a store-forwarding stall per read.
            for (std::int64_t r = 0; r < n; ++r) {
                const std::uint8_t* blk = src + static_cast<std::size_t>(r) * stride + b * sizeof(Block);
                std::memcpy(&d[r], blk, sizeof(std::uint16_t));
                for (int w = 0; w < kWords; ++w) {
                    std::uint32_t word;
                    std::memcpy(&word, blk + sizeof(std::uint16_t) + 4 * w, 4);
                    word ^= kFlip * 0x01010101u;
                    std::memcpy(q + w * 64 + r * 4, &word, 4);
                }
            }
            store_block<kBlockBytes>(dst + legacy_quants_at<kBlockBytes>(b), q);
            store_block<sizeof d>(dst + legacy_scales_at<kBlockBytes>(b), reinterpret_cast<const std::uint8_t*>(d));
        }
        end_stores();
    }

#if defined(__SSE2__)
    // The same layout assembled in registers and streamed out (stream_word_columns).
    static void pack_sse(const std::uint8_t* src, std::size_t stride, std::int64_t n, std::int64_t n_cols,
                         std::uint8_t* dst) noexcept {
        const std::int64_t nb = n_cols / kQK;
        const __m128i flip = _mm_set1_epi8(static_cast<char>(kFlip));
        for (std::int64_t b = 0; b < nb; ++b) {
            const std::uint8_t* blocks = src + static_cast<std::size_t>(b) * sizeof(Block);
            const auto block = [&](std::int64_t r) { return r < n ? blocks + static_cast<std::size_t>(r) * stride : nullptr; };
            std::uint8_t* out = dst + legacy_quants_at<kBlockBytes>(b);
            const std::uint8_t* rows[kPackRows];
            for (int r = 0; r < kPackRows; ++r) rows[r] = r < n ? block(r) + sizeof(std::uint16_t) : nullptr;
            stream_word_columns<kWords>(rows, flip, out);
            std::uint16_t d[kPackRows];
            for (int r = 0; r < kPackRows; ++r) {
                d[r] = 0;
                if (r < n) std::memcpy(&d[r], block(r), sizeof(std::uint16_t));
            }
            for (int h = 0; h < 2; ++h) {
                const std::uint16_t* e = d + 8 * h;
                _mm_stream_si128(reinterpret_cast<__m128i*>(dst + legacy_scales_at<kBlockBytes>(b) + 16 * h),
                                 _mm_set_epi16(e[7], e[6], e[5], e[4], e[3], e[2], e[1], e[0]));
            }
        }
        end_stores();
    }
#endif
};

using PackerQ4_0 = LegacyPacker<BlockQ4_0, 0x00>;
using PackerQ8_0 = LegacyPacker<BlockQ8_0, 0x80>;

// The portable path of the K-quant packers: each superblock assembled in a local buffer, row by
// row (fill(o, r, blk) puts row r's block `blk` in place), then stored whole.
template <std::size_t kBytes, std::size_t kBlockBytes, class Fill>
void pack_superblocks(const std::uint8_t* src, std::size_t src_stride, std::int64_t n, std::int64_t n_cols,
                      std::uint8_t* dst, Fill fill) noexcept {
    for (std::int64_t sb = 0; sb < n_cols / kQK_K; ++sb) {
        alignas(64) std::uint8_t o[kBytes] = {};
        for (std::int64_t r = 0; r < n; ++r) {
            fill(o, static_cast<int>(r), src + static_cast<std::size_t>(r) * src_stride + static_cast<std::size_t>(sb) * kBlockBytes);
        }
        store_block<kBytes>(dst + static_cast<std::size_t>(sb) * kBytes, o);
    }
    end_stores();
}

// Q4_K and Q5_K: the quant bytes of a row (Q4_K: qs; Q5_K: qh then qs, contiguous in the
// block) are kWords words, word w to line w of the super-block's quant part; then the scales
// [8 j][16 r] (bytes), the mins [4 p][16 r] (byte pairs 2p, 2p+1) and the fp16 d and dmin of the
// 16 rows. Absent rows stay zero.
template <class Block>
struct KQuant45Packer {
    static_assert(offsetof(Block, d) == offsetof(BlockQ4K, d) && offsetof(Block, dmin) == offsetof(BlockQ4K, dmin) &&
                  offsetof(Block, scales) == offsetof(BlockQ4K, scales));
    static constexpr std::size_t kHeader = offsetof(BlockQ4K, qs);  // d, dmin, scales
    static constexpr int kWords = static_cast<int>((sizeof(Block) - kHeader) / 4);
    static constexpr std::size_t kQuantBytes = static_cast<std::size_t>(kWords) * 64;
    static constexpr std::size_t kBytes = kQuantBytes + 128 + 128 + 32 + 32;

    static std::size_t group_bytes(std::int64_t n_cols) noexcept { return static_cast<std::size_t>(n_cols / kQK_K) * kBytes; }
    static void pack(const std::uint8_t* src, std::size_t src_stride, std::int64_t n, std::int64_t n_cols,
                     std::uint8_t* dst) noexcept;
#if defined(__SSE2__)
    static void pack_sse(const std::uint8_t* src, std::size_t src_stride, std::int64_t n, std::int64_t n_cols,
                         std::uint8_t* dst) noexcept;
#endif
};
using PackerQ4_K = KQuant45Packer<BlockQ4K>;
using PackerQ5_K = KQuant45Packer<BlockQ5K>;
static_assert(PackerQ4_K::kBytes == kPackQ4KBytes && PackerQ5_K::kBytes == kPackQ5KBytes);

#if defined(__SSE2__)
// The same in registers: the quants through stream_word_columns, each row's 16 scale and min
// bytes transposed with unpacks (an 8x8 transpose of byte pairs for the scales, of 16-bit words
// for the mins).
template <class Block>
void KQuant45Packer<Block>::pack_sse(const std::uint8_t* src, std::size_t src_stride, std::int64_t n,
                                     std::int64_t n_cols, std::uint8_t* dst) noexcept {
    const auto stream = [](std::uint8_t* p, __m128i v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), v); };
    // lines[k] = word k of x[0..7] (an 8x8 transpose of 16-bit words).
    const auto transpose_words = [](const __m128i* x, __m128i* lines) {
        __m128i b[8], c[8];
        for (int i = 0; i < 4; ++i) {
            b[2 * i] = _mm_unpacklo_epi16(x[2 * i], x[2 * i + 1]);
            b[2 * i + 1] = _mm_unpackhi_epi16(x[2 * i], x[2 * i + 1]);
        }
        for (int h = 0; h < 2; ++h) {  // h = 0: words 0-3, 1: words 4-7
            c[4 * h + 0] = _mm_unpacklo_epi32(b[h], b[2 + h]);
            c[4 * h + 1] = _mm_unpackhi_epi32(b[h], b[2 + h]);
            c[4 * h + 2] = _mm_unpacklo_epi32(b[4 + h], b[6 + h]);
            c[4 * h + 3] = _mm_unpackhi_epi32(b[4 + h], b[6 + h]);
        }
        for (int h = 0; h < 2; ++h) {
            lines[4 * h + 0] = _mm_unpacklo_epi64(c[4 * h], c[4 * h + 2]);
            lines[4 * h + 1] = _mm_unpackhi_epi64(c[4 * h], c[4 * h + 2]);
            lines[4 * h + 2] = _mm_unpacklo_epi64(c[4 * h + 1], c[4 * h + 3]);
            lines[4 * h + 3] = _mm_unpackhi_epi64(c[4 * h + 1], c[4 * h + 3]);
        }
    };
    for (std::int64_t sb = 0; sb < n_cols / kQK_K; ++sb) {
        const std::uint8_t* blocks = src + static_cast<std::size_t>(sb) * sizeof(Block);
        std::uint8_t* out = dst + static_cast<std::size_t>(sb) * kBytes;
        const std::uint8_t* rows[kPackRows];
        __m128i sm[kPackRows];  // [8 scales | 8 mins] per row
        std::uint16_t d[kPackRows], dmin[kPackRows];
        for (int r = 0; r < kPackRows; ++r) {
            rows[r] = nullptr;
            sm[r] = _mm_setzero_si128();
            d[r] = dmin[r] = 0;
            if (r >= n) continue;
            const std::uint8_t* blk = blocks + static_cast<std::size_t>(r) * src_stride;
            rows[r] = blk + kHeader;
            std::uint32_t w[4];
            kq_unpack_scale_words_k4(blk + offsetof(Block, scales), w);
            sm[r] = _mm_set_epi32(static_cast<int>(w[3]), static_cast<int>(w[2]), static_cast<int>(w[1]), static_cast<int>(w[0]));
            std::memcpy(&d[r], blk + offsetof(Block, d), 2);
            std::memcpy(&dmin[r], blk + offsetof(Block, dmin), 2);
        }
        stream_word_columns<kWords>(rows, _mm_setzero_si128(), out);
        std::uint8_t* tail = out + kQuantBytes;
        // Scales: x[i] = the 8 scales of rows 2i, 2i+1 as byte pairs, word j = scale j.
        __m128i x[8], lines[8];
        for (int i = 0; i < 8; ++i) x[i] = _mm_unpacklo_epi8(sm[2 * i], sm[2 * i + 1]);
        transpose_words(x, lines);
        for (int j = 0; j < 8; ++j) stream(tail + 16 * j, lines[j]);
        // Mins: rows 8h..8h+7, each 4 words (pairs 2p, 2p+1): word p of the 8 rows.
        for (int h = 0; h < 2; ++h) {
            for (int i = 0; i < 8; ++i) x[i] = _mm_unpackhi_epi64(sm[8 * h + i], sm[8 * h + i]);
            transpose_words(x, lines);
            for (int p = 0; p < 4; ++p) stream(tail + 128 + 32 * p + 16 * h, lines[p]);
        }
        for (int h = 0; h < 2; ++h) {
            const std::uint16_t* e = d + 8 * h;
            const std::uint16_t* f = dmin + 8 * h;
            stream(tail + 256 + 16 * h, _mm_set_epi16(e[7], e[6], e[5], e[4], e[3], e[2], e[1], e[0]));
            stream(tail + 288 + 16 * h, _mm_set_epi16(f[7], f[6], f[5], f[4], f[3], f[2], f[1], f[0]));
        }
    }
    end_stores();
}
#endif

template <class Block>
void KQuant45Packer<Block>::pack(const std::uint8_t* src, std::size_t src_stride, std::int64_t n, std::int64_t n_cols,
                                 std::uint8_t* dst) noexcept {
#if defined(__SSE2__)
    if (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) return pack_sse(src, src_stride, n, n_cols, dst);
#endif
    pack_superblocks<kBytes, sizeof(Block)>(src, src_stride, n, n_cols, dst, [](std::uint8_t* o, int r, const std::uint8_t* blk) {
        BlockQ4K head;  // d, dmin, scales; the quants are read in place
        std::memcpy(&head, blk, kHeader);
        for (int w = 0; w < kWords; ++w) std::memcpy(o + w * 64 + r * 4, blk + kHeader + 4 * w, 4);
        for (int j = 0; j < 8; ++j) {
            std::uint8_t sc, m;
            kq_scale_min_k4(j, head.scales, &sc, &m);
            o[kQuantBytes + j * 16 + r] = sc;
            o[kQuantBytes + 128 + (j / 2) * 32 + r * 2 + (j % 2)] = m;
        }
        std::memcpy(o + kQuantBytes + 256 + r * 2, &head.d, 2);
        std::memcpy(o + kQuantBytes + 256 + 32 + r * 2, &head.dmin, 2);
    });
}

// Q6_K: a row's 192 quant bytes (ql then qh, contiguous in the block) are 48 words, word w to
// line w; then the 16 scales of the 16 rows [16 j][16 r], the rows' fp16 d and 32 zero bytes.
constexpr std::size_t kQ6KQuantBytes = 3072;
constexpr std::size_t kQ6KWords = (offsetof(BlockQ6K, scales) - offsetof(BlockQ6K, ql)) / 4;
static_assert(kQ6KWords * 64 == kQ6KQuantBytes && offsetof(BlockQ6K, qh) == 128);

std::size_t group_bytes_q6_k(std::int64_t n_cols) noexcept {
    return static_cast<std::size_t>(n_cols / kQK_K) * kPackQ6KBytes;
}

#if defined(__SSE2__)
// The same in registers: the quants through stream_word_columns, the scales by a 16x16 byte
// transpose (unpacks of bytes, words, dwords, qwords).
void pack_q6_k_sse(const std::uint8_t* src, std::size_t src_stride, std::int64_t n, std::int64_t n_cols,
                   std::uint8_t* dst) noexcept {
    const auto stream = [](std::uint8_t* p, __m128i v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), v); };
    for (std::int64_t sb = 0; sb < n_cols / kQK_K; ++sb) {
        const std::uint8_t* blocks = src + static_cast<std::size_t>(sb) * sizeof(BlockQ6K);
        std::uint8_t* out = dst + static_cast<std::size_t>(sb) * kPackQ6KBytes;
        const std::uint8_t* rows[kPackRows];
        __m128i x[kPackRows];  // the rows' 16 scales
        std::uint16_t d[kPackRows];
        for (int r = 0; r < kPackRows; ++r) {
            rows[r] = nullptr;
            x[r] = _mm_setzero_si128();
            d[r] = 0;
            if (r >= n) continue;
            const std::uint8_t* blk = blocks + static_cast<std::size_t>(r) * src_stride;
            rows[r] = blk + offsetof(BlockQ6K, ql);
            x[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + offsetof(BlockQ6K, scales)));
            std::memcpy(&d[r], blk + offsetof(BlockQ6K, d), 2);
        }
        stream_word_columns<static_cast<int>(kQ6KWords)>(rows, _mm_setzero_si128(), out);
        // a[8h + i]: byte pairs (rows 2i, 2i+1) of scales 8h..8h+7.
        __m128i a[16], b[16], c[16];
        for (int i = 0; i < 8; ++i) {
            a[i] = _mm_unpacklo_epi8(x[2 * i], x[2 * i + 1]);
            a[8 + i] = _mm_unpackhi_epi8(x[2 * i], x[2 * i + 1]);
        }
        // b[8h + 2i + q]: 4-byte groups (rows 4i..4i+3) of scales 8h + 4q .. 8h + 4q + 3.
        for (int h = 0; h < 2; ++h) {
            for (int i = 0; i < 4; ++i) {
                b[8 * h + 2 * i] = _mm_unpacklo_epi16(a[8 * h + 2 * i], a[8 * h + 2 * i + 1]);
                b[8 * h + 2 * i + 1] = _mm_unpackhi_epi16(a[8 * h + 2 * i], a[8 * h + 2 * i + 1]);
            }
        }
        // c[4k + 2i + e]: 8-byte groups (rows 8i..8i+7) of scales 4k + 2e, 4k + 2e + 1 (k = 2h + q).
        for (int k = 0; k < 4; ++k) {
            const int h = k / 2, q = k % 2;
            for (int i = 0; i < 2; ++i) {
                const __m128i lo = b[8 * h + 2 * (2 * i) + q], hi = b[8 * h + 2 * (2 * i + 1) + q];
                c[4 * k + 2 * i] = _mm_unpacklo_epi32(lo, hi);
                c[4 * k + 2 * i + 1] = _mm_unpackhi_epi32(lo, hi);
            }
        }
        std::uint8_t* tail = out + kQ6KQuantBytes;
        for (int k = 0; k < 4; ++k) {
            for (int e = 0; e < 2; ++e) {
                const int j = 4 * k + 2 * e;
                stream(tail + 16 * j, _mm_unpacklo_epi64(c[4 * k + e], c[4 * k + 2 + e]));
                stream(tail + 16 * (j + 1), _mm_unpackhi_epi64(c[4 * k + e], c[4 * k + 2 + e]));
            }
        }
        for (int h = 0; h < 2; ++h) {
            const std::uint16_t* e = d + 8 * h;
            stream(tail + 256 + 16 * h, _mm_set_epi16(e[7], e[6], e[5], e[4], e[3], e[2], e[1], e[0]));
            stream(tail + 288 + 16 * h, _mm_setzero_si128());
        }
    }
    end_stores();
}
#endif

void pack_q6_k(const std::uint8_t* src, std::size_t src_stride, std::int64_t n, std::int64_t n_cols,
               std::uint8_t* dst) noexcept {
#if defined(__SSE2__)
    if (reinterpret_cast<std::uintptr_t>(dst) % 16 == 0) return pack_q6_k_sse(src, src_stride, n, n_cols, dst);
#endif
    pack_superblocks<kPackQ6KBytes, sizeof(BlockQ6K)>(src, src_stride, n, n_cols, dst, [](std::uint8_t* o, int r, const std::uint8_t* blk) {
        for (std::size_t w = 0; w < kQ6KWords; ++w) std::memcpy(o + w * 64 + r * 4, blk + 4 * w, 4);
        for (int j = 0; j < 16; ++j) o[kQ6KQuantBytes + j * 16 + r] = blk[offsetof(BlockQ6K, scales) + j];
        std::memcpy(o + kQ6KQuantBytes + 256 + r * 2, blk + offsetof(BlockQ6K, d), 2);
    });
}

// Token t's Q8_0 activation row to block-major values, float scales and bias -offset * sum(q).
// The fields are copied straight from the row: a copy of each whole 34-byte block to the stack,
// read back at other offsets, stalled store forwarding (1.4 us for 2048 values against 0.33).
template <int kOffset>
void prepare_q8_0(const std::uint8_t* act, std::int64_t t, std::int64_t n_tok, std::int64_t n_cols,
                  std::int8_t* qa, float* ad, std::int32_t* ab) noexcept {
    for (std::int64_t b = 0; b < n_cols / kQK; ++b) {
        const std::size_t i = static_cast<std::size_t>(b * n_tok + t);
        const std::uint8_t* blk = act + b * sizeof(BlockQ8_0);
        std::int8_t* q = qa + i * kQK;
        std::memcpy(q, blk + offsetof(BlockQ8_0, qs), kQK);
#if defined(__SSE2__)
        // Sum of the 32 signed bytes: psadbw of the bytes + 128 against zero, minus 32 * 128.
        const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
        const __m128i lo = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + offsetof(BlockQ8_0, qs))), flip);
        const __m128i hi = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + offsetof(BlockQ8_0, qs) + 16)), flip);
        const __m128i sad = _mm_add_epi64(_mm_sad_epu8(lo, _mm_setzero_si128()), _mm_sad_epu8(hi, _mm_setzero_si128()));
        const std::int32_t sum = _mm_cvtsi128_si32(_mm_add_epi64(sad, _mm_unpackhi_epi64(sad, sad))) - kQK * 128;
#else
        std::int32_t sum = 0;
        for (int j = 0; j < kQK; ++j) sum += q[j];
#endif
        std::uint16_t d;
        std::memcpy(&d, blk + offsetof(BlockQ8_0, d), sizeof d);
        ad[i] = fp16_to_fp32(d);
        ab[i] = -kOffset * sum;
    }
}

// The bias words of Q4_K and Q5_K: per sub-block pair (2p, 2p+1) the two int16 sums in one word.
void pair_sums(const std::int16_t* bsums, std::int32_t* out) noexcept {
    for (int p = 0; p < 4; ++p) {
        const std::int16_t pair[2] = {static_cast<std::int16_t>(bsums[4 * p] + bsums[4 * p + 1]),
                                      static_cast<std::int16_t>(bsums[4 * p + 2] + bsums[4 * p + 3])};
        std::memcpy(out + p, pair, 4);
    }
}

// The bias words of Q6_K: per 16-value sub-block j, -32 * its sum (its weights are stored + 32).
void minus_32_sums(const std::int16_t* bsums, std::int32_t* out) noexcept {
    for (int j = 0; j < 16; ++j) out[j] = -32 * bsums[j];
}

// Token t's Q8_K row: values and d block-major, and kWords bias words per block from its sums.
template <int kWords, void (*kBias)(const std::int16_t*, std::int32_t*) noexcept>
void prepare_q8_k(const std::uint8_t* act, std::int64_t t, std::int64_t n_tok, std::int64_t n_cols,
                  std::int8_t* qa, float* ad, std::int32_t* ab) noexcept {
    for (std::int64_t b = 0; b < n_cols / kQK_K; ++b) {  // fields copied straight, as prepare_q8_0
        const std::size_t i = static_cast<std::size_t>(b * n_tok + t);
        const std::uint8_t* blk = act + b * sizeof(BlockQ8K);
        std::memcpy(qa + i * kQK_K, blk + offsetof(BlockQ8K, qs), kQK_K);
        std::memcpy(ad + i, blk + offsetof(BlockQ8K, d), sizeof(float));
        std::int16_t bsums[kQK_K / 16];
        std::memcpy(bsums, blk + offsetof(BlockQ8K, bsums), sizeof bsums);
        kBias(bsums, ab + i * kWords);
    }
}

}  // namespace

const PackedLayout kPackedQ4_0{kQK, 1, PackerQ4_0::group_bytes, PackerQ4_0::pack, prepare_q8_0<8>};
const PackedLayout kPackedQ8_0{kQK, 1, PackerQ8_0::group_bytes, PackerQ8_0::pack, prepare_q8_0<128>};
const PackedLayout kPackedQ4_K{kQK_K, 4, PackerQ4_K::group_bytes, PackerQ4_K::pack, prepare_q8_k<4, pair_sums>};
const PackedLayout kPackedQ5_K{kQK_K, 4, PackerQ5_K::group_bytes, PackerQ5_K::pack, prepare_q8_k<4, pair_sums>};
const PackedLayout kPackedQ6_K{kQK_K, 16, group_bytes_q6_k, pack_q6_k, prepare_q8_k<16, minus_32_sums>};

}  // namespace ember::kernels

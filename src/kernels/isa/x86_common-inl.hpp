// Helpers shared by the AVX2, AVX-VNNI and AVX-512 kernel TUs (all compiled with at least AVX2 +
// FMA + F16C). Kernel bodies only: everything has internal linkage, so each ISA TU keeps its own
// copy and no copy compiled with wider flags can be picked by the linker for another TU.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/kquant_blocks.hpp"

namespace ember::kernels {
namespace {

inline float h2f(std::uint16_t h) { return _cvtsh_ss(h); }
/// fp16 bits of f, rounded to nearest even (vcvtps2ph).
inline std::uint16_t f2h(float f) { return _cvtss_sh(f, 0); }

/// A loaded vector the compiler must hold in a register: GCC otherwise folds the load into each
/// instruction that reads it, so a weight line split into two nibbles was loaded twice (AVX-512
/// Q4_0 decode kernel 24 -> 16 cycles a pair of blocks in L1).
template <class V>
inline V in_register(V v) {
    asm("" : "+v"(v));
    return v;
}

/// Decode streams each weight byte once, in order: fetching 4 KiB ahead of the block in hand
/// keeps more reads in flight than the hardware prefetcher alone (one core of the reference
/// machine read ~15 GB/s of packed Q4_0 without it, ~19 with it; Q4_K_M decode +50%).
constexpr std::size_t kPrefetchAhead = 4096;

/// Prefetches the kBytes that start at p (p need not be line aligned).
template <std::size_t kBytes>
inline void prefetch_at(const std::uint8_t* p) {
    const char* q = reinterpret_cast<const char*>(p);
    for (std::size_t l = 0; l < kBytes; l += 64) _mm_prefetch(q + l, _MM_HINT_T0);
    if constexpr (kBytes % 64 != 0) _mm_prefetch(q + kBytes - 1, _MM_HINT_T0);
}

/// Prefetches the kBytes that start kPrefetchAhead after p.
template <std::size_t kBytes>
inline void prefetch_ahead(const std::uint8_t* p) {
    prefetch_at<kBytes>(p + kPrefetchAhead);
}

/// What a call's streams together keep ahead of their reads: each of G streams prefetches
/// min(kPrefetchAhead, kCallAhead / G) on. Four streams 4 KiB ahead each (16 KiB in flight on one
/// core) read slower than one: a pure read of the Q4_0 decode pattern on the Zen 5 VM, 2 threads,
/// 9 interleaved passes: 53 / 57 / 60 GB/s with 4 / 2 / 1 KiB a stream, one stream 4 KiB ahead 62.
constexpr std::size_t kCallAhead = 8192;

/// How far each of a call's G streams prefetches ahead of its reads.
template <int G>
constexpr std::size_t stream_distance() {
    return kCallAhead / G < kPrefetchAhead ? kCallAhead / G : kPrefetchAhead;
}

/// What the K-quant tiles of several tokens on one row group keep ahead: such a tile spends about
/// 100 ns a superblock, and at kPrefetchAhead (1.2 Q6_K, 1.7 Q4_K superblocks) lines came in late.
/// TinyLlama, 2 threads, `--parallel 4/8`: AVX-512 Q4_K_M +11/+10%, AVX2 Q4_K_M +6.5/+3.3%, Q6_K
/// +8.5/+10.5% (docs/performance.md). Q4_0 and Q8_0's tiles measured mixed and keep 4 KiB.
constexpr std::size_t kOneGroupTileAhead = 8192;

/// The lead of a tile call's G streams: kOneGroupTileAhead for one group, else stream_distance.
template <int G>
constexpr std::size_t tile_ahead() {
    return G == 1 ? kOneGroupTileAhead : stream_distance<G>();
}

/// One of the G weight streams of a small-batch or prefill tile call that takes G row groups
/// (decode's one-token kernels use GroupStreams, below): prefetches run
/// `kDistance` ahead of the bytes in hand until that passes `end`, the end of the stream's run
/// in this call, then go `skip` bytes further, to the same place in the run the next call reads
/// in its stead, so that call's streams begin with their first reads in flight rather than as
/// demand misses (TinyLlama-shaped Q4_0 matvecs on an Intel Xeon VM: +3-4%; Q4_K 71 -> 80% of
/// the read in two streams). kAhead: more for the one-group K-quant tiles (kOneGroupTileAhead).
template <int G, std::size_t kAhead = stream_distance<G>()>
struct StreamPrefetch {
    static constexpr std::size_t kDistance = kAhead;

    const std::uint8_t* end;
    std::size_t skip;  // 0 where no later call takes the stream's place

    /// Group g of the call, `group_bytes` apart from wg0, whose run is the group's first
    /// run_bytes; the next call starts G groups on and takes the first n_next of them.
    static StreamPrefetch of_group(const std::uint8_t* wg0, std::size_t group_bytes, int g, std::size_t run_bytes,
                                   int n_next) {
        return {wg0 + g * group_bytes + run_bytes, g < n_next ? G * group_bytes - run_bytes : 0};
    }

    template <std::size_t kBytes>
    void ahead(const std::uint8_t* p) const {
        const std::uint8_t* t = p + kDistance;
        prefetch_at<kBytes>(t >= end ? t + skip : t);
    }
};

/// The G weight streams of a one-token (decode) call, one a row group `group_bytes` apart from
/// wg0, each reading the first `run_bytes` of its group in lockstep. All sit at the same offset at
/// any moment, so one address (group 0's) and G prefetches `group_bytes` apart serve them:
/// a wrap test a stream and a run-time step had cost the Q4_0 kernel ~100 instructions a chunk
/// for the 20 that do its work (one thread in L2: 50 -> 98 GB/s without them). The prefetches run
/// stream_distance<G>() ahead; past the run's end they go on to the same place of the run
/// the next call's streams read in their stead (G groups on) where that call takes G groups, and
/// otherwise on into the next group. kAhead: as StreamPrefetch's.
template <int G, std::size_t kAhead = stream_distance<G>()>
struct GroupStreams {
    const std::uint8_t* wg0;
    std::size_t group_bytes, run_bytes, skip;

    GroupStreams(const std::uint8_t* wg0_, std::size_t group_bytes_, std::size_t run_bytes_, int n_next)
        : wg0(wg0_), group_bytes(group_bytes_), run_bytes(run_bytes_),
          skip(n_next == G ? G * group_bytes_ - run_bytes_ : 0) {}

    /// Step `step` of the kSteps steps that read a unit of kBytes at offset `unit` of each run (a
    /// block pair, a superblock): prefetches that step's share of the unit's lines on every
    /// stream. Decode spreads a unit's prefetches over its steps rather than issuing them at its
    /// start: a burst (36 a block pair for Q4_0's four streams) fills the core's queue of misses,
    /// and the step's own loads, already in L2, wait behind it. Always inlined, with fixed trip
    /// counts once the caller's loops are unrolled: GCC counts a function that only prefetches
    /// as free of side effects (where it kept one out of line it deleted the calls), and a loop
    /// of run-time count keeps it from unrolling the kernels' loops over groups.
    template <std::size_t kBytes, int kSteps>
    [[gnu::always_inline]] void ahead_step(std::size_t unit, int step) const {
        constexpr int kLines = static_cast<int>((kBytes + 63) / 64), kEach = kLines / kSteps, kRest = kLines % kSteps;
        const std::size_t t = unit + kAhead + 64 * (step * kEach + (step < kRest ? step : kRest));
        const char* p = reinterpret_cast<const char*>(wg0 + (t < run_bytes ? t : t + skip));
        for (int i = 0; i < kEach + (step < kRest ? 1 : 0); ++i) {
#pragma GCC unroll 8
            for (int g = 0; g < G; ++g) _mm_prefetch(p + g * group_bytes + 64 * i, _MM_HINT_T0);
        }
    }
};

/// The groups a decode call of G groups, followed by one starting at group `next`, hands its
/// prefetches to (StreamPrefetch, GroupStreams): those left, at most G.
inline int groups_after(std::int64_t n_groups, std::int64_t next, int G) {
    return n_groups - next < G ? static_cast<int>(n_groups - next) : G;
}

inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/// 32 unsigned nibbles of a legacy block: low nibbles in bytes 0..15, high in 16..31.
inline __m256i nibbles(const std::uint8_t* qs) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(t), _mm_srli_epi16(t, 4), 1);
    return _mm256_and_si256(b, _mm256_set1_epi8(0x0f));
}

/// Four vectors of Q6_K's 6-bit weights from two ql vectors and the qh vector they share: the low
/// nibbles of ql0 and ql2, then their high nibbles, joined with qh's bit pairs 0, 1, 2, 3 (at bits
/// 4..5; high2 = 0x30 bytes, low = 0x0f bytes).
[[gnu::always_inline]] inline void q6k_quads(__m256i ql0, __m256i ql2, __m256i qh, __m256i low, __m256i high2,
                                             __m256i (&w)[4]) {
    w[0] = _mm256_or_si256(_mm256_and_si256(ql0, low), _mm256_and_si256(_mm256_slli_epi16(qh, 4), high2));
    w[1] = _mm256_or_si256(_mm256_and_si256(ql2, low), _mm256_and_si256(_mm256_slli_epi16(qh, 2), high2));
    w[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low), _mm256_and_si256(qh, high2));
    w[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql2, 4), low), _mm256_and_si256(_mm256_srli_epi16(qh, 2), high2));
}

/// 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of a Q4_K/Q5_K block, without memory trips.
inline __m128i unpack_scales_k4(const std::uint8_t* q) {
    std::uint32_t w0, w1, w2;
    __builtin_memcpy(&w0, q, 4);
    __builtin_memcpy(&w1, q + 4, 4);
    __builtin_memcpy(&w2, q + 8, 4);
    const std::uint32_t sc_lo = w0 & 0x3F3F3F3Fu;
    const std::uint32_t m_lo = w1 & 0x3F3F3F3Fu;
    const std::uint32_t sc_hi = (w2 & 0x0F0F0F0Fu) | (((w0 >> 6) & 0x03030303u) << 4);
    const std::uint32_t m_hi = ((w2 >> 4) & 0x0F0F0F0Fu) | (((w1 >> 6) & 0x03030303u) << 4);
    return _mm_set_epi32(static_cast<int>(m_hi), static_cast<int>(m_lo),
                         static_cast<int>(sc_hi), static_cast<int>(sc_lo));
}

/// Superblock i of a Q4_K (kQ5 false) or Q5_K row: quant pointers, scales and the unpacked
/// 6-bit scales (bytes 0..7) and mins (bytes 8..15).
template <bool kQ5>
struct KHead {
    const std::uint8_t* qs;
    const std::uint8_t* qh;  // Q5_K only
    float d, dmin;
    __m128i sm;
    KHead(const void* row, std::int64_t i) {
        const std::uint8_t* xb = static_cast<const std::uint8_t*>(row) +
                                 static_cast<std::size_t>(i) * (kQ5 ? sizeof(BlockQ5K) : sizeof(BlockQ4K));
        qs = xb + (kQ5 ? offsetof(BlockQ5K, qs) : offsetof(BlockQ4K, qs));
        qh = xb + offsetof(BlockQ5K, qh);
        d = h2f(kq_ld_u16(xb + offsetof(BlockQ4K, d)));
        dmin = h2f(kq_ld_u16(xb + offsetof(BlockQ4K, dmin)));
        sm = unpack_scales_k4(xb + offsetof(BlockQ4K, scales));
    }
};

/// Sum over j of mins[j] * (bsums[2j] + bsums[2j+1]) in 8 int32 lanes.
inline __m256i mins_dot_bsums(__m128i sm, const std::uint8_t* bsums) {
    const __m128i mins = _mm_unpackhi_epi64(sm, sm);
    const __m256i mins2 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(mins, mins));  // m0 m0 m1 m1 ..
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsums));
    return _mm256_madd_epi16(bs, mins2);
}

}  // namespace
}  // namespace ember::kernels

// AVX2 kernels that xsimd cannot express: the Q8_0/Q8_1 activation quantizers (vcvtps2dq
// rounding, saturating packs, vcvtps2ph) and the Q8_K one (truncating byte shuffles), which give
// exactly the scalar quantizers' bytes (the scalar one calls nearbyintf per value: ~4% of AVX2
// prefill). Kernel code only.
#include "kernels/isa/act_q8-inl.hpp"
#include "kernels/isa/act_q8k-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/x86_common-inl.hpp"

// Bit-identical to the scalar quantizers (quants.cpp): amax by max of |x|, d = amax / 127,
// q = round-half-even(x * (127 / amax)) by vcvtps2dq.
namespace ember::kernels::avx2 {
namespace {

template <bool WithSum>
inline Q8Scale quantize32(const float* x, std::int8_t* qs) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 v[4];
    for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(x + 8 * i);
    const __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(v[0], abs_mask), _mm256_and_ps(v[1], abs_mask)),
                                   _mm256_max_ps(_mm256_and_ps(v[2], abs_mask), _mm256_and_ps(v[3], abs_mask)));
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    const float id = amax != 0.0f ? 127.f / amax : 0.0f;
    const __m256 vid = _mm256_set1_ps(id);
    __m256i q[4];
    for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], vid));
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);  // undoes the packs' lane interleave
    const __m256i bytes = _mm256_permutevar8x32_epi32(
        _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3])), order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), bytes);
    int sum = 0;
    if constexpr (WithSum) {
        const __m256i s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
        sum = _mm_cvtsi128_si32(s4);
    }
    return {amax / 127.f, sum};
}

// Q8_K (act_q8k-inl.hpp): 8 values a vector.
inline float amax256(const float* x) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < 32; ++i) m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + 8 * i), abs_mask), m);  // NaN: keeps m
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    return _mm_cvtss_f32(m4);
}

inline int first_at256(const float* x, float amax) {
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 va = _mm256_set1_ps(amax);
    for (int i = 0; i < 32; ++i) {
        const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + 8 * i), abs_mask), va, _CMP_EQ_OQ));
        if (hit != 0) return 8 * i + __builtin_ctz(static_cast<unsigned>(hit));
    }
    return 0;  // not reached: amax is one of the magnitudes
}

// min(127, nearest_int(x * iscale)) for 8 values, as int32.
inline __m256i q8k_values(const float* x, __m256 vis) {
    // The product rounded first, as the scalar code does: GCC would fuse it into the add.
    const __m256 p = in_register(_mm256_mul_ps(_mm256_loadu_ps(x), vis));
    const __m256 v = _mm256_add_ps(p, _mm256_set1_ps(12582912.f));
    const __m256i q = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x007FFFFF)),
                                       _mm256_set1_epi32(0x00400000));
    return _mm256_min_epi32(q, _mm256_set1_epi32(127));
}

inline int quantize16_q8k(const float* x, float iscale, std::int8_t* qs) {
    const __m256 vis = _mm256_set1_ps(iscale);
    const __m256i q0 = q8k_values(x, vis), q1 = q8k_values(x + 8, vis);
    // Low byte of each int32 (truncation, as the scalar int8 cast): bytes 0, 4, 8, 12 of each lane
    // to its first dword, then the two lanes' dwords side by side.
    const __m256i low = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                         0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i pick = _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0);
    const __m256i b0 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q0, low), pick);
    const __m256i b1 = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q1, low), pick);
    const __m128i bytes = _mm_unpacklo_epi64(_mm256_castsi256_si128(b0), _mm256_castsi256_si128(b1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), bytes);
    const __m256i s = _mm256_add_epi32(_mm256_cvtepi8_epi32(bytes), _mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8)));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
    return _mm_cvtsi128_si32(s4);
}

}  // namespace

EMBER_DEFINE_QUANTIZE_ACT_Q8(quantize32, f2h)

void quantize_act_q8_k(const float* x, void* dst, std::int64_t n) {
    auto* out = static_cast<std::uint8_t*>(dst);
    for (std::int64_t b = 0; b < n / kQK_K; ++b) {
        write_q8k_block(x + b * kQK_K, out + b * sizeof(BlockQ8K), amax256, first_at256, quantize16_q8k);
    }
}
}  // namespace ember::kernels::avx2

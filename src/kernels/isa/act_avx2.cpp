// AVX2 kernels that xsimd cannot express: the Q8_0/Q8_1 activation quantizers (vcvtps2dq
// rounding, saturating packs, vcvtps2ph), which give exactly the scalar quantizers' bytes (the
// scalar one calls nearbyintf per value: ~4% of AVX2 prefill). Kernel code only.
#include "kernels/isa/act_q8-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"

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

}  // namespace

EMBER_DEFINE_QUANTIZE_ACT_Q8(quantize32)
}  // namespace ember::kernels::avx2

// AVX-512 kernels that xsimd cannot express: the Q8_0/Q8_1 activation quantizers (vcvtps2dq
// rounding, vpmovsdb, vcvtps2ph) and the Q8_K one (vpmovdb truncation), which give exactly the
// scalar quantizers' bytes. Kernel code only.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/isa/act_q8-inl.hpp"
#include "kernels/isa/act_q8k-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/isa/x86_common-inl.hpp"

// Bit-identical to the scalar quantizers (quants.cpp): amax by max of |x|, d = amax / 127,
// q = round-half-even(x * (127 / amax)) by vcvtps2dq.
namespace ember::kernels::avx512 {
namespace {

template <bool WithSum>
inline Q8Scale quantize32(const float* x, std::int8_t* qs) {
    const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_and_ps(v0, abs_mask), _mm512_and_ps(v1, abs_mask)));
    const float id = amax != 0.0f ? 127.f / amax : 0.0f;
    const __m512 vid = _mm512_set1_ps(id);
    const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, vid));
    const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, vid));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtsepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtsepi32_epi8(q1));
    return {amax / 127.f, WithSum ? _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1)) : 0};
}

// Q8_K (act_q8k-inl.hpp): 16 values a vector.
inline float amax256(const float* x) {
    const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    __m512 m = _mm512_setzero_ps();
    for (int i = 0; i < 16; ++i) m = _mm512_max_ps(_mm512_and_ps(_mm512_loadu_ps(x + 16 * i), abs_mask), m);  // NaN: keeps m
    return _mm512_reduce_max_ps(m);
}

inline int first_at256(const float* x, float amax) {
    const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    const __m512 va = _mm512_set1_ps(amax);
    for (int i = 0; i < 16; ++i) {
        const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_and_ps(_mm512_loadu_ps(x + 16 * i), abs_mask), va, _CMP_EQ_OQ);
        if (hit != 0) return 16 * i + __builtin_ctz(hit);
    }
    return 0;  // not reached: amax is one of the magnitudes
}

inline int quantize16_q8k(const float* x, float iscale, std::int8_t* qs) {
    // The product rounded first, as the scalar code does: GCC would fuse it into the add.
    const __m512 p = in_register(_mm512_mul_ps(_mm512_loadu_ps(x), _mm512_set1_ps(iscale)));
    const __m512 v = _mm512_add_ps(p, _mm512_set1_ps(12582912.f));
    __m512i q = _mm512_sub_epi32(_mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x007FFFFF)),
                                 _mm512_set1_epi32(0x00400000));
    q = _mm512_min_epi32(q, _mm512_set1_epi32(127));
    const __m128i bytes = _mm512_cvtepi32_epi8(q);  // truncation, as the scalar int8 cast
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), bytes);
    return _mm512_reduce_add_epi32(_mm512_cvtepi8_epi32(bytes));
}

}  // namespace

EMBER_DEFINE_QUANTIZE_ACT_Q8(quantize32, f2h)

void quantize_act_q8_k(const float* x, void* dst, std::int64_t n) {
    auto* out = static_cast<std::uint8_t*>(dst);
    for (std::int64_t b = 0; b < n / kQK_K; ++b) {
        write_q8k_block(x + b * kQK_K, out + b * sizeof(BlockQ8K), amax256, first_at256, quantize16_q8k);
    }
}
}  // namespace ember::kernels::avx512

// AVX-512 kernels that xsimd cannot express: the Q8_0/Q8_1 activation quantizers (vcvtps2dq
// rounding, vpmovsdb, vcvtps2ph), which give exactly the scalar quantizers' bytes. Kernel code only.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/isa/act_q8-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"

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

}  // namespace

EMBER_DEFINE_QUANTIZE_ACT_Q8(quantize32)
}  // namespace ember::kernels::avx512

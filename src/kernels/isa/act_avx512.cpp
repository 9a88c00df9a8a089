// AVX-512 kernels that xsimd cannot express: the Q8_0/Q8_1 activation quantizers (vcvtps2dq
// rounding, vpmovsdb, vcvtps2ph), which give exactly the scalar quantizers' bytes. Kernel code only.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstring>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/quant_blocks.hpp"

// Activation quantizers, bit-identical to the scalar ones (quants.cpp): amax by max of |x|,
// d = amax / 127, q = round-half-even(x * (127 / amax)) by vcvtps2dq, d to fp16 by vcvtps2ph.
namespace ember::kernels::avx512 {
namespace {

template <bool WithSum>
inline void quantize_q8(const float* x, std::uint8_t* out, std::size_t block_bytes, std::int64_t n) {
    const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK, out += block_bytes) {
        const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
        const float amax = _mm512_reduce_max_ps(
            _mm512_max_ps(_mm512_and_ps(v0, abs_mask), _mm512_and_ps(v1, abs_mask)));
        const float d = amax / 127.f;
        const float id = amax != 0.0f ? 127.f / amax : 0.0f;
        const __m512 vid = _mm512_set1_ps(id);
        const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, vid));
        const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, vid));
        std::int8_t* qs = reinterpret_cast<std::int8_t*>(out + (WithSum ? 4 : 2));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtsepi32_epi8(q0));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtsepi32_epi8(q1));
        const std::uint16_t dh = _cvtss_sh(d, 0);
        std::memcpy(out, &dh, 2);
        if constexpr (WithSum) {
            const int sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
            const std::uint16_t sh = _cvtss_sh(d * static_cast<float>(sum), 0);
            std::memcpy(out + 2, &sh, 2);
        }
    }
}
}  // namespace

void quantize_act_q8_0(const float* x, void* dst, std::int64_t n) {
    quantize_q8<false>(x, static_cast<std::uint8_t*>(dst), sizeof(BlockQ8_0), n);
}
void quantize_act_q8_1(const float* x, void* dst, std::int64_t n) {
    quantize_q8<true>(x, static_cast<std::uint8_t*>(dst), sizeof(BlockQ8_1), n);
}
}  // namespace ember::kernels::avx512

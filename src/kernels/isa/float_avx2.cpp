// Float kernels for AVX2 + FMA + F16C, from the xsimd templates in float_kernels-inl.hpp.
#include "kernels/isa/float_gemm-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"

namespace ember::kernels::avx2 {
EMBER_FLOAT_EXPORTS(xsimd::fma3<xsimd::avx2>)
EMBER_FLOAT_GEMM_EXPORTS(xsimd::fma3<xsimd::avx2>)
}  // namespace ember::kernels::avx2

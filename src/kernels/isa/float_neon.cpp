// Float kernels for ARM64 Advanced SIMD, from the xsimd templates in float_kernels-inl.hpp.
#include "kernels/isa/float_gemm-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"

namespace ember::kernels::neon {
EMBER_FLOAT_EXPORTS(xsimd::neon64)
EMBER_FLOAT_GEMM_EXPORTS(xsimd::neon64)
}  // namespace ember::kernels::neon

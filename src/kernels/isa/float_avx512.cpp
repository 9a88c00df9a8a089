// Float kernels for AVX-512 (F/BW/DQ), from the xsimd templates in float_kernels-inl.hpp.
// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on masked intrinsics (false positive).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/isa/float_kernels-inl.hpp"
#include "kernels/isa/isa_kernels.hpp"

namespace ember::kernels::avx512 {
EMBER_FLOAT_EXPORTS(xsimd::avx512bw)
}  // namespace ember::kernels::avx512

// AVX2 + AVX-VNNI K-quant kernels: kquant_avx2-inl.hpp with vpdpwssd. The only K-quant TU built
// with -mavxvnni; chosen only when cpuid reports AVX-VNNI (Isa::avx2_vnni).
#include "kernels/isa/kquant_avx2-inl.hpp"

namespace ember::kernels::avx2_vnni {
EMBER_KQUANT_AVX2_EXPORTS(true)
}  // namespace ember::kernels::avx2_vnni

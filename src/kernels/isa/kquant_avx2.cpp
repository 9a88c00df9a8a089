// AVX2 (Haswell: no VNNI) K-quant kernels: kquant_avx2-inl.hpp with vpmaddwd + vpaddd.
#include "kernels/isa/kquant_avx2-inl.hpp"

namespace ember::kernels::avx2 {
EMBER_KQUANT_AVX2_EXPORTS(false)
}  // namespace ember::kernels::avx2

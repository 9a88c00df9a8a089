// AVX2 (Haswell: no VNNI) kernels of the repacked layouts: packed_avx2-inl.hpp with vpmaddubsw +
// vpmaddwd.
#include "kernels/isa/packed_avx2-inl.hpp"

namespace ember::kernels::avx2 {
EMBER_PACKED_AVX2_EXPORTS(false)
}  // namespace ember::kernels::avx2

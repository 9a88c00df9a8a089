// AVX2 (Haswell: no VNNI) kernels of the repacked layouts: packed_avx2-inl.hpp with vpmaddubsw +
// vpmaddwd.
#include "kernels/isa/packed_avx2-inl.hpp"

namespace ember::kernels::avx2 {
EMBER_DEFINE_PACKED(packed_avx2::Gemms<false>::legacy, packed_avx2::Gemms<false>::q45k, packed_avx2::Gemms<false>::q6k)
}  // namespace ember::kernels::avx2

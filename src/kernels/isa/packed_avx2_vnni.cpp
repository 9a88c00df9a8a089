// AVX2 + AVX-VNNI kernels of the repacked layouts: packed_avx2-inl.hpp with vpdpbusd on ymm.
// Built with -mavxvnni; chosen only when cpuid reports AVX-VNNI (Isa::avx2_vnni).
#include "kernels/isa/packed_avx2-inl.hpp"

namespace ember::kernels::avx2_vnni {
EMBER_DEFINE_PACKED(packed_avx2::Gemms<true>::legacy, packed_avx2::Gemms<true>::q45k, packed_avx2::Gemms<true>::q6k)
}  // namespace ember::kernels::avx2_vnni

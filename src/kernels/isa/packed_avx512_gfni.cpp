// AVX-512 VNNI + GFNI kernels of the repacked Q5_K and Q6_K layouts: packed_avx512-inl.hpp with
// gf2p8affineqb joining the high bits to the nibbles in decode. Built with -mgfni; chosen only
// when cpuid reports GFNI (Isa::avx512_gfni, Ice Lake and Zen 4 on).
#include "kernels/isa/packed_avx512-inl.hpp"

namespace ember::kernels::avx512_gfni {

EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q5_k) {
    packed_avx512::KQuants<true>::q45k<true>(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after);
}
EMBER_PACKED_GEMM_SIGNATURE(packed_gemm_q6_k) {
    packed_avx512::KQuants<true>::q6k(nb, w, group_bytes, n_groups, n_valid_rows, a, ad, abias, n_tok, y, ldy, n_after);
}

}  // namespace ember::kernels::avx512_gfni

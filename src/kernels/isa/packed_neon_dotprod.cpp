// FEAT_DotProd kernels of the repacked layouts: packed_neon-inl.hpp with sdot by element. Built
// with +dotprod; chosen when HWCAP reports asimddp.
#include "kernels/isa/packed_neon-inl.hpp"

namespace ember::kernels::neon_dotprod {
using Packed = packed_neon::Kernels<true>;
EMBER_DEFINE_PACKED(Packed::legacy, Packed::q45k, Packed::q6k)
}  // namespace ember::kernels::neon_dotprod

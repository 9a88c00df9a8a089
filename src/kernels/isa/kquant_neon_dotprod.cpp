// FEAT_DotProd K-quant dot products: kquant_neon-inl.hpp with sdot (Isa::neon_dotprod).
#include "kernels/isa/kquant_neon-inl.hpp"

namespace ember::kernels::neon_dotprod {
EMBER_KQUANT_NEON_EXPORTS(true)
}  // namespace ember::kernels::neon_dotprod

// ARMv8-A K-quant dot products: kquant_neon-inl.hpp with smull + sadalp.
#include "kernels/isa/kquant_neon-inl.hpp"

namespace ember::kernels::neon {
EMBER_KQUANT_NEON_EXPORTS(false)
}  // namespace ember::kernels::neon

// FEAT_DotProd legacy block kernels: legacy_neon-inl.hpp with sdot. Built with +dotprod; chosen
// only when HWCAP reports asimddp (Isa::neon_dotprod).
#include "kernels/isa/legacy_neon-inl.hpp"

namespace ember::kernels::neon_dotprod {
template <int K> using Micro = NeonLegacy<true>::Micro<K>;
EMBER_LEGACY_EXPORTS(Micro, 2, 2)
}  // namespace ember::kernels::neon_dotprod

// ARMv8-A legacy block kernels: legacy_neon-inl.hpp with smull + sadalp.
#include "kernels/isa/legacy_neon-inl.hpp"

namespace ember::kernels::neon {
template <int K> using Micro = NeonLegacy<false>::Micro<K>;
EMBER_LEGACY_EXPORTS(Micro, 2, 2)
}  // namespace ember::kernels::neon

// ARMv8-A kernels of the repacked layouts: packed_neon-inl.hpp with smull/smlal into int16 runs.
#include "kernels/isa/packed_neon-inl.hpp"

namespace ember::kernels::neon {
using Packed = packed_neon::Kernels<false>;
EMBER_DEFINE_PACKED(Packed::legacy, Packed::q45k, Packed::q6k)
}  // namespace ember::kernels::neon

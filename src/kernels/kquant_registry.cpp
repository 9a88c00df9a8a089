// Registration point for the K-quant kernels (owned by the K-quant work; see
// docs/kernels-interface.md). Until they land, no K-quant type has kernels.
#include "kernels/type_kernels.hpp"

namespace ember::kernels {

const TypeKernels* kquant_kernels(TensorType, Isa) noexcept { return nullptr; }

}  // namespace ember::kernels

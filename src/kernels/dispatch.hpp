// Run-time ISA selection: cpuid is read once; EMBER_ISA=scalar|avx2|avx512 forces a path (an
// unavailable forced ISA falls back to the best available, with one warning on stderr).
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/attention.hpp"
#include "kernels/type_kernels.hpp"

namespace ember::kernels {

/// Float kernels of one ISA (semantics in float_ops.hpp).
struct FloatKernels {
    float (*dot)(const float* a, const float* b, std::int64_t n);
    void (*axpy)(float* y, float a, const float* x, std::int64_t n);
    void (*swiglu)(float* out, const float* gate, const float* up, std::int64_t n);
    AttendFn attend;  ///< kernels/attention.hpp
};

/// The ISA kernels run on (detected once, or forced by EMBER_ISA).
Isa active_isa() noexcept;
/// Best ISA this CPU (and OS) supports, ignoring EMBER_ISA.
Isa detected_isa() noexcept;
/// Whether this CPU can run `isa`'s kernels.
bool isa_available(Isa isa) noexcept;
std::string_view isa_name(Isa isa) noexcept;
inline std::string_view isa_name() noexcept { return isa_name(active_isa()); }

/// Float kernels of a given ISA (tests compare each path to scalar) / of the active ISA.
const FloatKernels& float_kernels(Isa isa) noexcept;
inline const FloatKernels& float_kernels() noexcept { return float_kernels(active_isa()); }

}  // namespace ember::kernels

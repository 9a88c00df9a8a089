// Run-time ISA selection: the CPU's features are read once (cpu_features.hpp); EMBER_ISA names a
// path to force (an unavailable or unknown one falls back to the best available, with one
// warning on stderr). The kernels of each ISA come from the traits table (kernel_table.cpp).
#pragma once

#include <cstdint>
#include <string_view>

#include "ember/types.hpp"
#include "kernels/attention.hpp"
#include "kernels/type_kernels.hpp"

namespace ember::kernels {

/// Float kernels of one ISA (semantics in float_ops.hpp and attention.hpp).
struct FloatKernels {
    void (*rmsnorm)(float* out, const float* x, const float* w, std::int64_t n, float eps);
    void (*swiglu)(float* out, const float* gate, const float* up, std::int64_t n);
    void (*geglu)(float* out, const float* gate, const float* up, std::int64_t n);
    void (*add)(float* y, const float* x, std::int64_t n);
    void (*rope)(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot,
                 const float* cs, bool neox);
    AttendFn attend_f32, attend_f16, attend_q8_0;  ///< One per KvType (kernels/attention.hpp).
    AttendFn attend(KvType type) const noexcept {
        return type == KvType::f16 ? attend_f16 : type == KvType::q8_0 ? attend_q8_0 : attend_f32;
    }
};

/// The ISA kernels run on (detected once, or forced by EMBER_ISA).
Isa active_isa() noexcept;
/// Best ISA this CPU (and OS) supports, ignoring EMBER_ISA.
Isa detected_isa() noexcept;
/// Whether ember was built with `isa`'s kernels and this CPU can run them.
bool isa_available(Isa isa) noexcept;
/// "scalar", "avx2", "avx2_vnni", "avx512", "avx512_gfni", "neon", "neon_dotprod", "neon_i8mm".
std::string_view isa_name(Isa isa) noexcept;
inline std::string_view isa_name() noexcept { return isa_name(active_isa()); }
/// The ISA named `name` (as isa_name gives it); false when no ISA has that name.
bool isa_from_name(std::string_view name, Isa& isa) noexcept;

/// Float kernels of a given ISA (tests compare each path to scalar) / of the active ISA.
const FloatKernels& float_kernels(Isa isa) noexcept;
inline const FloatKernels& float_kernels() noexcept { return float_kernels(active_isa()); }

}  // namespace ember::kernels

// Shared helpers of the kernel tests: deterministic data, available ISAs, named tolerances.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/dispatch.hpp"

namespace kernel_test {

/// SIMD vs scalar twin: float accumulation order differs, integer block sums must not.
/// Relative to sum |w_i * a_i| of the dequantized operands.
constexpr double kSimdRelTol = 1e-5;

inline std::vector<ember::kernels::Isa> available_isas() {
    std::vector<ember::kernels::Isa> out;
    for (int i = 0; i < ember::kernels::kIsaCount; ++i) {
        const auto isa = static_cast<ember::kernels::Isa>(i);
        if (ember::kernels::isa_available(isa)) out.push_back(isa);
    }
    return out;
}

/// The available ISAs whose entry for `type` differs from their parent's in `same` (scalar always
/// counts): an ISA that inherits a kernel has nothing new to test, which keeps the emulated runs
/// (qemu) short.
template <class Same>
std::vector<ember::kernels::Isa> isas_with_own(ember::TensorType type, Same same) {
    std::vector<ember::kernels::Isa> out;
    for (ember::kernels::Isa isa : available_isas()) {
        const auto* k = ember::kernels::type_kernels(type, isa);
        const auto* parent = ember::kernels::type_kernels(type, ember::kernels::isa_parent(isa));
        if (isa == ember::kernels::Isa::scalar || !same(*k, *parent)) out.push_back(isa);
    }
    return out;
}

inline std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

}  // namespace kernel_test

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
/// Quantized dot vs float dot of the dequantized operands (Q8_1's s is rounded to fp16).
constexpr double kQuantDotRelTol = 2e-3;

inline std::vector<ember::kernels::Isa> available_isas() {
    std::vector<ember::kernels::Isa> out;
    for (int i = 0; i < ember::kernels::kIsaCount; ++i) {
        const auto isa = static_cast<ember::kernels::Isa>(i);
        if (ember::kernels::isa_available(isa)) out.push_back(isa);
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

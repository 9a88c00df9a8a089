// GeGLU with ggml's fp16 GELU table (kernels/float_ops.hpp, geglu_f16).
#include <cmath>
#include <vector>

#include "kernels/float_ops.hpp"
#include "kernels/fp16.hpp"

namespace ember::kernels {
namespace {

// GELU (tanh form) in float, as ggml_gelu_f32.
float gelu_tanh(float x) {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoef = 0.044715f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

// GELU of every fp16 value, rounded to fp16 and widened back (ggml_table_gelu_f16).
const std::vector<float>& gelu_f16_table() {
    static const std::vector<float> table = [] {
        std::vector<float> t(65536);
        for (std::uint32_t i = 0; i < 65536; ++i) {
            t[i] = fp16_to_fp32(fp32_to_fp16(gelu_tanh(fp16_to_fp32(static_cast<std::uint16_t>(i)))));
        }
        return t;
    }();
    return table;
}

}  // namespace

void geglu_f16(float* out, const float* gate, const float* up, std::int64_t n) {
    const std::vector<float>& table = gelu_f16_table();
    for (std::int64_t i = 0; i < n; ++i) {
        const float x = gate[i];
        const float g = x <= -10.0f ? 0.0f : x >= 10.0f ? x : table[fp32_to_fp16(x)];
        out[i] = g * up[i];
    }
}

}  // namespace ember::kernels

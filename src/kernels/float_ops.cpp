#include "kernels/float_ops.hpp"

#include "kernels/dispatch.hpp"

namespace ember::kernels {

void rmsnorm(float* out, const float* x, const float* weight, std::int64_t n, float eps) {
    float_kernels().rmsnorm(out, x, weight, n, eps);
}

void swiglu(float* out, const float* gate, const float* up, std::int64_t n) {
    float_kernels().swiglu(out, gate, up, n);
}

void geglu(float* out, const float* gate, const float* up, std::int64_t n) {
    float_kernels().geglu(out, gate, up, n);
}

void add(float* y, const float* x, std::int64_t n) { float_kernels().add(y, x, n); }

void rope(float* x, std::int64_t n_heads, std::int64_t head_dim, std::int64_t n_rot, const float* cs,
          bool neox) {
    float_kernels().rope(x, n_heads, head_dim, n_rot, cs, neox);
}

}  // namespace ember::kernels

#include "kernels/quants.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/fp16.hpp"
#include "kernels/type_kernels.hpp"
#include "runtime/fail.hpp"

namespace ember::kernels {
namespace {

// Value of largest magnitude (the first one on ties), as ggml's Q4_0/Q5_0 quantizers pick it.
float signed_absmax(const float* x) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

void min_max(const float* x, float& min, float& max) {
    min = FLT_MAX;
    max = -FLT_MAX;
    for (int j = 0; j < kQK; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
}

// Packs 32 values of 0..31 into nibbles (qs) and fifth bits (qh).
void pack5(const std::uint8_t* q, std::uint8_t* qs, std::uint8_t* qh) {
    std::uint32_t h = 0;
    for (int j = 0; j < kQK / 2; ++j) {
        qs[j] = static_cast<std::uint8_t>((q[j] & 0x0f) | ((q[j + 16] & 0x0f) << 4));
        h |= static_cast<std::uint32_t>((q[j] >> 4) & 1) << j;
        h |= static_cast<std::uint32_t>((q[j + 16] >> 4) & 1) << (j + 16);
    }
    std::memcpy(qh, &h, 4);
}

std::uint32_t load_qh(const std::uint8_t* qh) {
    std::uint32_t h;
    std::memcpy(&h, qh, 4);
    return h;
}

}  // namespace

void quantize_row_q4_0(const float* x, BlockQ4_0* y, std::int64_t n) noexcept {
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
        const float d = signed_absmax(x) / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        for (int j = 0; j < kQK / 2; ++j) {
            const int q0 = std::min(15, static_cast<int>(static_cast<std::int8_t>(x[j] * id + 8.5f)));
            const int q1 = std::min(15, static_cast<int>(static_cast<std::int8_t>(x[j + 16] * id + 8.5f)));
            y[b].qs[j] = static_cast<std::uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_row_q4_1(const float* x, BlockQ4_1* y, std::int64_t n) noexcept {
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
        float min, max;
        min_max(x, min, max);
        const float d = (max - min) / 15;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        y[b].m = fp32_to_fp16(min);
        for (int j = 0; j < kQK / 2; ++j) {
            const int q0 = std::min(15, static_cast<int>(static_cast<std::int8_t>((x[j] - min) * id + 0.5f)));
            const int q1 = std::min(15, static_cast<int>(static_cast<std::int8_t>((x[j + 16] - min) * id + 0.5f)));
            y[b].qs[j] = static_cast<std::uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_row_q5_0(const float* x, BlockQ5_0* y, std::int64_t n) noexcept {
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
        const float d = signed_absmax(x) / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        std::uint8_t q[kQK];
        for (int j = 0; j < kQK; ++j) {
            q[j] = static_cast<std::uint8_t>(
                std::min(31, static_cast<int>(static_cast<std::int8_t>(x[j] * id + 16.5f))));
        }
        pack5(q, y[b].qs, y[b].qh);
    }
}

void quantize_row_q5_1(const float* x, BlockQ5_1* y, std::int64_t n) noexcept {
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
        float min, max;
        min_max(x, min, max);
        const float d = (max - min) / 31;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        y[b].m = fp32_to_fp16(min);
        std::uint8_t q[kQK];
        // ggml stores (uint8_t)(v + 0.5f) without a clamp; v <= 31 + rounding, so & 31 is exact.
        for (int j = 0; j < kQK; ++j) q[j] = static_cast<std::uint8_t>((x[j] - min) * id + 0.5f);
        pack5(q, y[b].qs, y[b].qh);
    }
}

void quantize_row_q8_0(const float* x, BlockQ8_0* y, std::int64_t n) noexcept {
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = fp32_to_fp16(d);
        for (int j = 0; j < kQK; ++j) y[b].qs[j] = static_cast<std::int8_t>(std::roundf(x[j] * id));
    }
}

void quantize_act_f32(const float* x, void* dst, std::int64_t n) {
    if (n > 0) std::memcpy(dst, x, static_cast<std::size_t>(n) * sizeof(float));
}

void quantize_act_f16(const float* x, void* dst, std::int64_t n) {
    auto* y = static_cast<std::uint16_t*>(dst);
    for (std::int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

void quantize_act_bf16(const float* x, void* dst, std::int64_t n) {
    auto* y = static_cast<std::uint16_t*>(dst);
    for (std::int64_t i = 0; i < n; ++i) y[i] = fp32_to_bf16(x[i]);
}

namespace {
// ggml x86 runtime Q8 activation quantization of one block; returns d (unrounded) and sum(q).
float quantize_q8_block(const float* x, std::int8_t* q, int& sum) {
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.f;
    const float id = amax != 0.0f ? 127.f / amax : 0.0f;
    sum = 0;
    for (int j = 0; j < kQK; ++j) {
        const int v = static_cast<int>(std::nearbyint(x[j] * id));  // round half to even
        q[j] = static_cast<std::int8_t>(v);
        sum += v;
    }
    return d;
}
}  // namespace

void quantize_act_q8_0(const float* x, void* dst, std::int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(dst);
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
        int sum;
        y[b].d = fp32_to_fp16(quantize_q8_block(x, y[b].qs, sum));
    }
}

void quantize_act_q8_1(const float* x, void* dst, std::int64_t n) {
    auto* y = static_cast<BlockQ8_1*>(dst);
    for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
        int sum;
        const float d = quantize_q8_block(x, y[b].qs, sum);
        y[b].d = fp32_to_fp16(d);
        y[b].s = fp32_to_fp16(d * static_cast<float>(sum));
    }
}

void dequantize_f32(const void* src, float* dst, std::int64_t n) {
    if (n > 0) std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(float));
}

void dequantize_f16(const void* src, float* dst, std::int64_t n) {
    const auto* h = static_cast<const std::uint16_t*>(src);
    for (std::int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
}

void dequantize_bf16(const void* src, float* dst, std::int64_t n) {
    const auto* h = static_cast<const std::uint16_t*>(src);
    for (std::int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(h[i]);
}

void dequantize_q4_0(const void* src, float* dst, std::int64_t n) {
    const auto* x = static_cast<const BlockQ4_0*>(src);
    for (std::int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < kQK / 2; ++j) {
            dst[j] = static_cast<float>((x[b].qs[j] & 0x0f) - 8) * d;
            dst[j + 16] = static_cast<float>((x[b].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantize_q4_1(const void* src, float* dst, std::int64_t n) {
    const auto* x = static_cast<const BlockQ4_1*>(src);
    for (std::int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
        const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
        for (int j = 0; j < kQK / 2; ++j) {
            dst[j] = static_cast<float>(x[b].qs[j] & 0x0f) * d + m;
            dst[j + 16] = static_cast<float>(x[b].qs[j] >> 4) * d + m;
        }
    }
}

void dequantize_q5_0(const void* src, float* dst, std::int64_t n) {
    const auto* x = static_cast<const BlockQ5_0*>(src);
    for (std::int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
        const float d = fp16_to_fp32(x[b].d);
        const std::uint32_t qh = load_qh(x[b].qh);
        for (int j = 0; j < kQK / 2; ++j) {
            const int q0 = (x[b].qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
            const int q1 = (x[b].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
            dst[j] = static_cast<float>(q0 - 16) * d;
            dst[j + 16] = static_cast<float>(q1 - 16) * d;
        }
    }
}

void dequantize_q5_1(const void* src, float* dst, std::int64_t n) {
    const auto* x = static_cast<const BlockQ5_1*>(src);
    for (std::int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
        const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
        const std::uint32_t qh = load_qh(x[b].qh);
        for (int j = 0; j < kQK / 2; ++j) {
            const int q0 = (x[b].qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
            const int q1 = (x[b].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
            dst[j] = static_cast<float>(q0) * d + m;
            dst[j + 16] = static_cast<float>(q1) * d + m;
        }
    }
}

void dequantize_q8_0(const void* src, float* dst, std::int64_t n) {
    const auto* x = static_cast<const BlockQ8_0*>(src);
    for (std::int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(x[b].qs[j]) * d;
    }
}

void dequantize_q8_1(const void* src, float* dst, std::int64_t n) {
    const auto* x = static_cast<const BlockQ8_1*>(src);
    for (std::int64_t b = 0; b < n / kQK; ++b, dst += kQK) {
        const float d = fp16_to_fp32(x[b].d);
        for (int j = 0; j < kQK; ++j) dst[j] = static_cast<float>(x[b].qs[j]) * d;
    }
}

void quantize_row(TensorType type, const float* x, void* dst, std::int64_t n) {
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(type));
    if (!traits || n % traits->block_size != 0) {
        fail("quantize_row: " + std::string(tensor_type_name(type)) + " cannot hold a row of " +
             std::to_string(n) + " values");
    }
    const TypeKernels* k = type_kernels(type, Isa::scalar);
    if (k != nullptr && k->quantize != nullptr) return k->quantize(x, dst, n);
    fail("quantize_row: no quantizer for type " + std::string(tensor_type_name(type)));
}

}  // namespace ember::kernels

// Scalar twins of the legacy block dot products: the test oracle and the EMBER_ISA=scalar path.
// Integer block sums follow ggml's *_generic order: sumf += sumi * (dw * da) (+ m * s).
#include <cmath>
#include <cstring>

#include "kernels/fp16.hpp"
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels::scalar {
namespace {

std::uint32_t load_qh(const std::uint8_t* qh) {
    std::uint32_t h;
    std::memcpy(&h, qh, 4);
    return h;
}

// Unpacks 32 quants of a 4-bit (+ optional fifth bit) block into q[0..31] (unsigned).
void unpack4(const std::uint8_t* qs, std::uint32_t qh, bool five, int* q) {
    for (int j = 0; j < kQK / 2; ++j) {
        q[j] = qs[j] & 0x0f;
        q[j + 16] = qs[j] >> 4;
        if (five) {
            q[j] |= static_cast<int>((qh >> j) & 1u) << 4;
            q[j + 16] |= static_cast<int>((qh >> (j + 16)) & 1u) << 4;
        }
    }
}

int dot_block(const int* q, int offset, const std::int8_t* qy) {
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += (q[j] - offset) * qy[j];
    return sum;
}

}  // namespace

float vec_dot_q4_0(std::int64_t n, const void* w, const void* a) {
    const auto* x = static_cast<const BlockQ4_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(a);
    float sumf = 0.0f;
    int q[kQK];
    for (std::int64_t b = 0; b < n / kQK; ++b) {
        unpack4(x[b].qs, 0, false, q);
        const int sumi = dot_block(q, 8, y[b].qs);
        sumf += static_cast<float>(sumi) * fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d);
    }
    return sumf;
}

float vec_dot_q5_0(std::int64_t n, const void* w, const void* a) {
    const auto* x = static_cast<const BlockQ5_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(a);
    float sumf = 0.0f;
    int q[kQK];
    for (std::int64_t b = 0; b < n / kQK; ++b) {
        unpack4(x[b].qs, load_qh(x[b].qh), true, q);
        const int sumi = dot_block(q, 16, y[b].qs);
        sumf += (fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d)) * static_cast<float>(sumi);
    }
    return sumf;
}

float vec_dot_q4_1(std::int64_t n, const void* w, const void* a) {
    const auto* x = static_cast<const BlockQ4_1*>(w);
    const auto* y = static_cast<const BlockQ8_1*>(a);
    float sumf = 0.0f;
    int q[kQK];
    for (std::int64_t b = 0; b < n / kQK; ++b) {
        unpack4(x[b].qs, 0, false, q);
        const int sumi = dot_block(q, 0, y[b].qs);
        sumf += (fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d)) * static_cast<float>(sumi) +
                fp16_to_fp32(x[b].m) * fp16_to_fp32(y[b].s);
    }
    return sumf;
}

float vec_dot_q5_1(std::int64_t n, const void* w, const void* a) {
    const auto* x = static_cast<const BlockQ5_1*>(w);
    const auto* y = static_cast<const BlockQ8_1*>(a);
    float sumf = 0.0f;
    int q[kQK];
    for (std::int64_t b = 0; b < n / kQK; ++b) {
        unpack4(x[b].qs, load_qh(x[b].qh), true, q);
        const int sumi = dot_block(q, 0, y[b].qs);
        sumf += (fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d)) * static_cast<float>(sumi) +
                fp16_to_fp32(x[b].m) * fp16_to_fp32(y[b].s);
    }
    return sumf;
}

float vec_dot_q8_0(std::int64_t n, const void* w, const void* a) {
    const auto* x = static_cast<const BlockQ8_0*>(w);
    const auto* y = static_cast<const BlockQ8_0*>(a);
    float sumf = 0.0f;
    for (std::int64_t b = 0; b < n / kQK; ++b) {
        int sumi = 0;
        for (int j = 0; j < kQK; ++j) sumi += x[b].qs[j] * y[b].qs[j];
        sumf += static_cast<float>(sumi) * (fp16_to_fp32(x[b].d) * fp16_to_fp32(y[b].d));
    }
    return sumf;
}

}  // namespace ember::kernels::scalar

// Shared helpers of the K-quant tests: deterministic data and quantized rows.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gguf/tensor_type.hpp"
#include "kernels/kquant.hpp"

namespace kq_test {

using namespace ember::kernels;

/// n values ~ N(0, sigma) with a few outliers (like real weight rows).
inline std::vector<float> gaussian(std::int64_t n, std::uint32_t seed, float sigma = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, sigma);
    std::vector<float> x(static_cast<std::size_t>(n));
    for (auto& v : x) v = dist(rng);
    for (std::int64_t i = 0; i < n; i += 97) x[static_cast<std::size_t>(i)] *= 4.0f;
    return x;
}

/// Quantizes x (n values) into a byte buffer of the given K-quant weight type.
inline std::vector<std::uint8_t> quantize(ember::TensorType type, const std::vector<float>& x) {
    const auto n = static_cast<std::int64_t>(x.size());
    const auto nb = static_cast<std::size_t>(n / kQK_K);
    std::vector<std::uint8_t> out;
    switch (type) {
        case ember::TensorType::Q4_K:
            out.resize(nb * sizeof(BlockQ4K));
            quantize_row_q4_k(x.data(), reinterpret_cast<BlockQ4K*>(out.data()), n);
            break;
        case ember::TensorType::Q5_K:
            out.resize(nb * sizeof(BlockQ5K));
            quantize_row_q5_k(x.data(), reinterpret_cast<BlockQ5K*>(out.data()), n);
            break;
        case ember::TensorType::Q6_K:
            out.resize(nb * sizeof(BlockQ6K));
            quantize_row_q6_k(x.data(), reinterpret_cast<BlockQ6K*>(out.data()), n);
            break;
        default:
            out.resize(nb * sizeof(BlockQ8K));
            quantize_row_q8_k(x.data(), reinterpret_cast<BlockQ8K*>(out.data()), n);
            break;
    }
    return out;
}

inline std::vector<float> dequantize(ember::TensorType type, const std::uint8_t* data, std::int64_t n) {
    std::vector<float> y(static_cast<std::size_t>(n));
    switch (type) {
        case ember::TensorType::Q4_K: dequantize_row_q4_k(reinterpret_cast<const BlockQ4K*>(data), y.data(), n); break;
        case ember::TensorType::Q5_K: dequantize_row_q5_k(reinterpret_cast<const BlockQ5K*>(data), y.data(), n); break;
        case ember::TensorType::Q6_K: dequantize_row_q6_k(reinterpret_cast<const BlockQ6K*>(data), y.data(), n); break;
        default: dequantize_row_q8_k(reinterpret_cast<const BlockQ8K*>(data), y.data(), n); break;
    }
    return y;
}

/// Root-mean-square error of y against x, relative to the root-mean-square of x.
inline double relative_rmse(const std::vector<float>& x, const std::vector<float>& y) {
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        err += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
        ref += double(x[i]) * x[i];
    }
    return ref > 0 ? std::sqrt(err / ref) : std::sqrt(err);
}

inline constexpr ember::TensorType kWeightTypes[] = {ember::TensorType::Q4_K, ember::TensorType::Q5_K,
                                                     ember::TensorType::Q6_K};

}  // namespace kq_test

#include "kernels/packed.hpp"

#include <cstring>

#include "kernels/kquant_blocks.hpp"
#include "kernels/quant_blocks.hpp"

namespace ember::kernels {
namespace {

constexpr PackedKernels kScalarQ4_0{TensorType::Q4_0, 8, 4 * 64, 32, scalar::packed_gemm_q4_0};
constexpr PackedKernels kScalarQ8_0{TensorType::Q8_0, 128, 8 * 64, 32, scalar::packed_gemm_q8_0};
constexpr PackedKernels kScalarQ4_K{TensorType::Q4_K, 0, kPackQ4KBytes, 256, scalar::packed_gemm_q4_k};
constexpr PackedKernels kAvx512Q4_0{TensorType::Q4_0, 8, 4 * 64, 32, avx512::packed_gemm_q4_0};
constexpr PackedKernels kAvx512Q8_0{TensorType::Q8_0, 128, 8 * 64, 32, avx512::packed_gemm_q8_0};
constexpr PackedKernels kAvx512Q4_K{TensorType::Q4_K, 0, kPackQ4KBytes, 256, avx512::packed_gemm_q4_k};

}  // namespace

const PackedKernels* packed_kernels_exact(TensorType type, Isa isa) noexcept {
    switch (isa) {
        case Isa::scalar:
            if (type == TensorType::Q4_0) return &kScalarQ4_0;
            if (type == TensorType::Q8_0) return &kScalarQ8_0;
            if (type == TensorType::Q4_K) return &kScalarQ4_K;
            return nullptr;
        case Isa::avx512:
            if (type == TensorType::Q4_0) return &kAvx512Q4_0;
            if (type == TensorType::Q8_0) return &kAvx512Q8_0;
            if (type == TensorType::Q4_K) return &kAvx512Q4_K;
            return nullptr;
        case Isa::avx2: return nullptr;
    }
    return nullptr;
}

const PackedKernels* packed_kernels(TensorType type, Isa isa) noexcept {
    for (int i = static_cast<int>(isa); i >= 0; --i) {
        if (const PackedKernels* k = packed_kernels_exact(type, static_cast<Isa>(i))) return k;
    }
    return nullptr;
}

std::size_t packed_group_bytes(const PackedKernels& k, std::int64_t n_cols) noexcept {
    if (k.type == TensorType::Q4_K) return static_cast<std::size_t>(n_cols / kQK_K) * kPackQ4KBytes;
    const auto nb = static_cast<std::size_t>(n_cols / kQK);
    const std::size_t bytes = nb * (k.block_bytes + kPackRows * sizeof(std::uint16_t));
    return (bytes + 63) / 64 * 64;
}

void pack_group(const PackedKernels& k, const std::uint8_t* src, std::size_t src_stride,
                std::int64_t n, std::int64_t n_cols, std::uint8_t* dst) noexcept {
    std::memset(dst, 0, packed_group_bytes(k, n_cols));
    if (k.type == TensorType::Q4_K) {
        for (std::int64_t r = 0; r < n; ++r) {
            const std::uint8_t* row = src + static_cast<std::size_t>(r) * src_stride;
            for (std::int64_t sb = 0; sb < n_cols / kQK_K; ++sb) {
                BlockQ4K blk;
                std::memcpy(&blk, row + sb * sizeof(BlockQ4K), sizeof blk);
                std::uint8_t* o = dst + static_cast<std::size_t>(sb) * kPackQ4KBytes;
                for (int kk = 0; kk < 4; ++kk)
                    for (int c = 0; c < 8; ++c)
                        for (int i = 0; i < 4; ++i) o[kk * 512 + c * 64 + r * 4 + i] = blk.qs[32 * kk + 4 * c + i];
                for (int j = 0; j < 8; ++j) {
                    std::uint8_t sc, m;
                    kq_scale_min_k4(j, blk.scales, &sc, &m);
                    o[2048 + j * 16 + r] = sc;
                    o[2048 + 128 + (j / 2) * 32 + r * 2 + (j % 2)] = m;
                }
                std::memcpy(o + 2048 + 256 + r * 2, &blk.d, 2);
                std::memcpy(o + 2048 + 256 + 32 + r * 2, &blk.dmin, 2);
            }
        }
        return;
    }
    const std::int64_t nb = n_cols / kQK;
    auto* scales = reinterpret_cast<std::uint16_t*>(dst + static_cast<std::size_t>(nb) * k.block_bytes);
    for (std::int64_t r = 0; r < n; ++r) {
        const std::uint8_t* row = src + static_cast<std::size_t>(r) * src_stride;
        for (std::int64_t b = 0; b < nb; ++b) {
            std::uint8_t* q = dst + static_cast<std::size_t>(b) * k.block_bytes;
            if (k.type == TensorType::Q4_0) {
                BlockQ4_0 blk;
                std::memcpy(&blk, row + b * sizeof(BlockQ4_0), sizeof blk);
                scales[b * kPackRows + r] = blk.d;
                for (int m = 0; m < 4; ++m)
                    for (int i = 0; i < 4; ++i) q[m * 64 + r * 4 + i] = blk.qs[4 * m + i];
            } else {
                BlockQ8_0 blk;
                std::memcpy(&blk, row + b * sizeof(BlockQ8_0), sizeof blk);
                scales[b * kPackRows + r] = blk.d;
                for (int s = 0; s < 8; ++s)
                    for (int i = 0; i < 4; ++i)
                        q[s * 64 + r * 4 + i] = static_cast<std::uint8_t>(blk.qs[4 * s + i] + 128);
            }
        }
    }
}

}  // namespace ember::kernels

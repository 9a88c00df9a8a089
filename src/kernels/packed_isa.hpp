// Per-ISA kernels of the repacked 16-row layouts (see packed.hpp). Plain declarations only, so
// per-ISA translation units can include this without instantiating STL templates.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

constexpr int kPackRows = 16;  ///< Weight rows interleaved in one packed group.
/// Bytes of one packed Q4_K superblock of 16 rows: 4 x 8 chunks of 64 quant bytes, 8 x 16 u8
/// scales, 4 x 16 x 2 u8 mins (pairs of sub-blocks), 16 fp16 d, 16 fp16 dmin.
constexpr int kPackQ4KBytes = 2048 + 128 + 128 + 32 + 32;

namespace scalar {
void packed_gemm_q4_0(std::int64_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t,
                      const std::int8_t*, const float*, const std::int32_t*, std::int64_t, float*,
                      std::int64_t);
void packed_gemm_q8_0(std::int64_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t,
                      const std::int8_t*, const float*, const std::int32_t*, std::int64_t, float*,
                      std::int64_t);
void packed_gemm_q4_k(std::int64_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t,
                      const std::int8_t*, const float*, const std::int32_t*, std::int64_t, float*,
                      std::int64_t);
}  // namespace scalar
namespace avx512 {
void packed_gemm_q4_0(std::int64_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t,
                      const std::int8_t*, const float*, const std::int32_t*, std::int64_t, float*,
                      std::int64_t);
void packed_gemm_q8_0(std::int64_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t,
                      const std::int8_t*, const float*, const std::int32_t*, std::int64_t, float*,
                      std::int64_t);
void packed_gemm_q4_k(std::int64_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t,
                      const std::int8_t*, const float*, const std::int32_t*, std::int64_t, float*,
                      std::int64_t);
}  // namespace avx512

}  // namespace ember::kernels

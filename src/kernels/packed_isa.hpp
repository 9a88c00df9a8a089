// Per-ISA kernels of the repacked 16-row layouts (see packed.hpp). Plain declarations only, so
// per-ISA translation units can include this without instantiating STL templates.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

constexpr int kPackRows = 16;  ///< Weight rows interleaved in one packed group.

namespace scalar {
void packed_gemm_q4_0(std::int64_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t,
                      const std::int8_t*, const float*, const std::int32_t*, std::int64_t, float*,
                      std::int64_t);
void packed_gemm_q8_0(std::int64_t, const std::uint8_t*, std::size_t, std::int64_t, std::int64_t,
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
}  // namespace avx512

}  // namespace ember::kernels

// The ggml tensor types a GGUF file may name: id, name, block size and bytes per block.
// Layouts follow ggml (ggml-common.h); see docs/quant_formats.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ember {

/// ggml tensor type ids as stored in GGUF tensor infos.
enum class TensorType : std::uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
    IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
    IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
    TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct TensorTypeTraits {
    TensorType type;
    std::string_view name;
    std::int64_t block_size;   ///< Elements per block (1 for plain types).
    std::int64_t block_bytes;  ///< Bytes per block.
};

/// Traits of a type id, or nullopt for an id that ggml does not define.
std::optional<TensorTypeTraits> tensor_type_traits(std::uint32_t id) noexcept;

/// "Q4_0", "F32", ... ("type 123" style names are the caller's job for unknown ids).
std::string_view tensor_type_name(TensorType type) noexcept;

}  // namespace ember

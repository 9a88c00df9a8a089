#include "gguf/tensor_type.hpp"

#include <array>

namespace ember {
namespace {

constexpr std::array<TensorTypeTraits, 32> kTraits{{
    {TensorType::F32, "F32", 1, 4},
    {TensorType::F16, "F16", 1, 2},
    {TensorType::Q4_0, "Q4_0", 32, 2 + 16},
    {TensorType::Q4_1, "Q4_1", 32, 2 + 2 + 16},
    {TensorType::Q5_0, "Q5_0", 32, 2 + 4 + 16},
    {TensorType::Q5_1, "Q5_1", 32, 2 + 2 + 4 + 16},
    {TensorType::Q8_0, "Q8_0", 32, 2 + 32},
    {TensorType::Q8_1, "Q8_1", 32, 4 + 32},
    {TensorType::Q2_K, "Q2_K", 256, 256 / 16 + 256 / 4 + 2 + 2},
    {TensorType::Q3_K, "Q3_K", 256, 256 / 8 + 256 / 4 + 12 + 2},
    {TensorType::Q4_K, "Q4_K", 256, 2 + 2 + 12 + 256 / 2},
    {TensorType::Q5_K, "Q5_K", 256, 2 + 2 + 12 + 256 / 8 + 256 / 2},
    {TensorType::Q6_K, "Q6_K", 256, 256 / 2 + 256 / 4 + 256 / 16 + 2},
    {TensorType::Q8_K, "Q8_K", 256, 4 + 256 + 16 * 2},
    {TensorType::IQ2_XXS, "IQ2_XXS", 256, 2 + 256 / 8 * 2},
    {TensorType::IQ2_XS, "IQ2_XS", 256, 2 + 256 / 8 * 2 + 256 / 32},
    {TensorType::IQ3_XXS, "IQ3_XXS", 256, 2 + 3 * (256 / 8)},
    {TensorType::IQ1_S, "IQ1_S", 256, 2 + 256 / 8 + 256 / 16},
    {TensorType::IQ4_NL, "IQ4_NL", 32, 2 + 16},
    {TensorType::IQ3_S, "IQ3_S", 256, 2 + 256 / 4 + 256 / 32 + 256 / 8 + 256 / 64},
    {TensorType::IQ2_S, "IQ2_S", 256, 2 + 256 / 4 + 256 / 16},
    {TensorType::IQ4_XS, "IQ4_XS", 256, 2 + 2 + 256 / 64 + 256 / 2},
    {TensorType::I8, "I8", 1, 1},
    {TensorType::I16, "I16", 1, 2},
    {TensorType::I32, "I32", 1, 4},
    {TensorType::I64, "I64", 1, 8},
    {TensorType::F64, "F64", 1, 8},
    {TensorType::IQ1_M, "IQ1_M", 256, 256 / 8 + 256 / 16 + 256 / 32},
    {TensorType::BF16, "BF16", 1, 2},
    {TensorType::TQ1_0, "TQ1_0", 256, (256 - 4 * 256 / 64) / 5 + 256 / 64 + 2},
    {TensorType::TQ2_0, "TQ2_0", 256, 2 + 64},
    {TensorType::MXFP4, "MXFP4", 32, 1 + 16},
}};

}  // namespace

std::optional<TensorTypeTraits> tensor_type_traits(std::uint32_t id) noexcept {
    for (const auto& t : kTraits) {
        if (static_cast<std::uint32_t>(t.type) == id) return t;
    }
    return std::nullopt;
}

std::string_view tensor_type_name(TensorType type) noexcept {
    const auto t = tensor_type_traits(static_cast<std::uint32_t>(type));
    return t ? t->name : std::string_view("unknown");
}

}  // namespace ember

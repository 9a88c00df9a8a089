// How the KV cache stores one row (the keys or values of one position in one layer): F32, F16
// or Q8_0 (blocks of 32 values with an fp16 scale; a block never straddles two heads, so the
// head dimension must be a multiple of 32).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/types.hpp"

namespace ember::model {

/// "F32", "F16", "Q8_0".
const char* kv_type_name(KvType type) noexcept;
/// Bytes of one row of n values. Throws ember::Error when `type` cannot hold rows of heads of
/// head_dim values (Q8_0: head_dim % 32 != 0).
std::size_t kv_row_bytes(KvType type, std::int64_t n, std::int64_t head_dim);
/// Stores n floats as a row (Q8_0: rounded as ggml's quantize_row_q8_0_ref).
void kv_store_row(KvType type, const float* src, std::uint8_t* dst, std::int64_t n) noexcept;
/// Reads a row back as n floats.
void kv_load_row(KvType type, const std::uint8_t* src, float* dst, std::int64_t n) noexcept;

}  // namespace ember::model

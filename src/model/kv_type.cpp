#include "model/kv_type.hpp"

#include <cstring>
#include <string>

#include "kernels/quant_blocks.hpp"
#include "kernels/quants.hpp"
#include "runtime/fail.hpp"

namespace ember::model {

const char* kv_type_name(KvType type) noexcept {
    switch (type) {
        case KvType::f32: return "F32";
        case KvType::f16: return "F16";
        case KvType::q8_0: return "Q8_0";
    }
    return "unknown";
}

std::size_t kv_row_bytes(KvType type, std::int64_t n, std::int64_t head_dim) {
    switch (type) {
        case KvType::f32: return static_cast<std::size_t>(n) * 4;
        case KvType::f16: return static_cast<std::size_t>(n) * 2;
        case KvType::q8_0:
            if (head_dim % kernels::kQK != 0) {
                fail(std::string("KV cache type Q8_0 needs a head dimension that is a multiple of 32; this model's is ") +
                     std::to_string(head_dim) + " (use F16 or F32)");
            }
            return static_cast<std::size_t>(n / kernels::kQK) * sizeof(kernels::BlockQ8_0);
    }
    fail("unknown KV cache type " + std::to_string(static_cast<int>(type)));
}

void kv_store_row(KvType type, const float* src, std::uint8_t* dst, std::int64_t n) noexcept {
    switch (type) {
        case KvType::f32: std::memcpy(dst, src, static_cast<std::size_t>(n) * 4); return;
        case KvType::f16: kernels::quantize_act_f16(src, dst, n); return;
        case KvType::q8_0: kernels::quantize_row_q8_0(src, reinterpret_cast<kernels::BlockQ8_0*>(dst), n); return;
    }
}

void kv_load_row(KvType type, const std::uint8_t* src, float* dst, std::int64_t n) noexcept {
    switch (type) {
        case KvType::f32: std::memcpy(dst, src, static_cast<std::size_t>(n) * 4); return;
        case KvType::f16: kernels::dequantize_f16(src, dst, n); return;
        case KvType::q8_0: kernels::dequantize_q8_0(src, dst, n); return;
    }
}

}  // namespace ember::model

// Registration of the K-quant kernels (Q4_K, Q5_K, Q6_K with Q8_K activations) in the
// type-kernel table (see docs/kernels-interface.md). Activation quantization and dequantization
// are the scalar reference on every ISA (identical bytes); only the dot products differ.
#include "kernels/kquant.hpp"
#include "kernels/type_kernels.hpp"

namespace ember::kernels {
namespace {

void quantize_act_q8_k(const float* x, void* dst, std::int64_t n) {
    quantize_row_q8_k(x, static_cast<BlockQ8K*>(dst), n);
}
void dequantize_q4_k(const void* src, float* dst, std::int64_t n) {
    dequantize_row_q4_k(static_cast<const BlockQ4K*>(src), dst, n);
}
void dequantize_q5_k(const void* src, float* dst, std::int64_t n) {
    dequantize_row_q5_k(static_cast<const BlockQ5K*>(src), dst, n);
}
void dequantize_q6_k(const void* src, float* dst, std::int64_t n) {
    dequantize_row_q6_k(static_cast<const BlockQ6K*>(src), dst, n);
}

struct KQuantSet {
    TypeKernels q4_k, q5_k, q6_k;
};

constexpr KQuantSet make_set(VecDotFn d4, VecDotFn d5, VecDotFn d6, TileFn t4 = nullptr,
                             TileFn t5 = nullptr, TileFn t6 = nullptr) {
    return {{TensorType::Q4_K, TensorType::Q8_K, quantize_act_q8_k, d4, t4, dequantize_q4_k},
            {TensorType::Q5_K, TensorType::Q8_K, quantize_act_q8_k, d5, t5, dequantize_q5_k},
            {TensorType::Q6_K, TensorType::Q8_K, quantize_act_q8_k, d6, t6, dequantize_q6_k}};
}

constexpr KQuantSet kScalar = make_set(vec_dot_q4_k_q8_k_scalar, vec_dot_q5_k_q8_k_scalar,
                                       vec_dot_q6_k_q8_k_scalar);
constexpr KQuantSet kAvx2 = make_set(vec_dot_q4_k_q8_k_avx2, vec_dot_q5_k_q8_k_avx2,
                                     vec_dot_q6_k_q8_k_avx2, tile_q4_k_q8_k_avx2,
                                     tile_q5_k_q8_k_avx2, tile_q6_k_q8_k_avx2);
constexpr KQuantSet kAvx2Vnni = make_set(vec_dot_q4_k_q8_k_avx2_vnni, vec_dot_q5_k_q8_k_avx2_vnni,
                                         vec_dot_q6_k_q8_k_avx2_vnni, tile_q4_k_q8_k_avx2_vnni,
                                         tile_q5_k_q8_k_avx2_vnni, tile_q6_k_q8_k_avx2_vnni);
constexpr KQuantSet kAvx512 = make_set(vec_dot_q4_k_q8_k_avx512, vec_dot_q5_k_q8_k_avx512,
                                       vec_dot_q6_k_q8_k_avx512, tile_q4_k_q8_k_avx512,
                                       tile_q5_k_q8_k_avx512, tile_q6_k_q8_k_avx512);

const KQuantSet& set_for(Isa isa) noexcept {
    switch (isa) {
        case Isa::avx512: return kAvx512;
        case Isa::avx2: return kquant_has_avxvnni() ? kAvx2Vnni : kAvx2;
        case Isa::scalar: break;
    }
    return kScalar;
}

}  // namespace

bool kquant_has_avxvnni() noexcept {
    static const bool has = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni");
    }();
    return has;
}

const TypeKernels* kquant_kernels(TensorType type, Isa isa) noexcept {
    const KQuantSet& s = set_for(isa);
    switch (type) {
        case TensorType::Q4_K: return &s.q4_k;
        case TensorType::Q5_K: return &s.q5_k;
        case TensorType::Q6_K: return &s.q6_k;
        default: return nullptr;
    }
}

}  // namespace ember::kernels

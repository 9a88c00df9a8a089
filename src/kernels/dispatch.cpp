#include "kernels/dispatch.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/isa/isa_kernels.hpp"
#include "kernels/quants.hpp"

namespace ember::kernels {
namespace {

constexpr std::size_t kMaxTypeId = 64;

struct CpuFeatures {
    bool avx2 = false;    // AVX2 + FMA + F16C (+ OS support, checked by libgcc via xgetbv)
    bool avx512 = false;  // F, BW, VL, DQ, VNNI
    bool avx512bf16 = false;
};

CpuFeatures read_cpu() noexcept {
    __builtin_cpu_init();
    CpuFeatures f;
    f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi2");
    f.avx512 = f.avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vnni");
    f.avx512bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
    return f;
}

const CpuFeatures& cpu() noexcept {
    static const CpuFeatures features = read_cpu();
    return features;
}

Isa choose_isa() noexcept {
    const Isa best = detected_isa();
    const char* env = std::getenv("EMBER_ISA");
    if (env == nullptr || *env == '\0') return best;
    Isa wanted = best;
    if (std::strcmp(env, "scalar") == 0) {
        wanted = Isa::scalar;
    } else if (std::strcmp(env, "avx2") == 0) {
        wanted = Isa::avx2;
    } else if (std::strcmp(env, "avx512") == 0) {
        wanted = Isa::avx512;
    } else {
        std::fprintf(stderr, "ember: EMBER_ISA=%s is not one of scalar, avx2, avx512; using %s\n",
                     env, isa_name(best).data());
        return best;
    }
    if (!isa_available(wanted)) {
        std::fprintf(stderr, "ember: EMBER_ISA=%s is not supported by this CPU; using %s\n", env,
                     isa_name(best).data());
        return best;
    }
    return wanted;
}

using TypeTable = std::array<TypeKernels, kMaxTypeId>;  // vec_dot == nullptr: no entry

void put(TypeTable& t, TypeKernels k) { t[static_cast<std::size_t>(k.type)] = k; }

// Entries shared by all ISAs: activation quantizers and dequantizers are the scalar ones
// (identical bytes everywhere), vec_dot/tile differ.
struct Tables {
    std::array<TypeTable, kIsaCount> by_isa{};
    std::array<FloatKernels, kIsaCount> floats{};
};

#define EMBER_LEGACY_ROWS(ns, t4_0, t4_1, t5_0, t5_1, t8_0)                                        \
    put(t, {TensorType::F32, TensorType::F32, quantize_act_f32, ns::vec_dot_f32, nullptr, dequantize_f32});     \
    put(t, {TensorType::F16, TensorType::F16, quantize_act_f16, ns::vec_dot_f16, nullptr, dequantize_f16});     \
    put(t, {TensorType::BF16, TensorType::BF16, quantize_act_bf16, ns::vec_dot_bf16, nullptr, dequantize_bf16}); \
    put(t, {TensorType::Q4_0, TensorType::Q8_0, quantize_act_q8_0, ns::vec_dot_q4_0, t4_0, dequantize_q4_0});   \
    put(t, {TensorType::Q4_1, TensorType::Q8_1, quantize_act_q8_1, ns::vec_dot_q4_1, t4_1, dequantize_q4_1});   \
    put(t, {TensorType::Q5_0, TensorType::Q8_0, quantize_act_q8_0, ns::vec_dot_q5_0, t5_0, dequantize_q5_0});   \
    put(t, {TensorType::Q5_1, TensorType::Q8_1, quantize_act_q8_1, ns::vec_dot_q5_1, t5_1, dequantize_q5_1});   \
    put(t, {TensorType::Q8_0, TensorType::Q8_0, quantize_act_q8_0, ns::vec_dot_q8_0, t8_0, dequantize_q8_0});

Tables build_tables() {
    Tables tables;
    {
        auto& t = tables.by_isa[static_cast<int>(Isa::scalar)];
        EMBER_LEGACY_ROWS(scalar, nullptr, nullptr, nullptr, nullptr, nullptr)
        tables.floats[0] = {scalar::dot, scalar::axpy, scalar::swiglu, scalar::attend};
    }
    {
        auto& t = tables.by_isa[static_cast<int>(Isa::avx2)];
        EMBER_LEGACY_ROWS(avx2, avx2::tile_q4_0, avx2::tile_q4_1, avx2::tile_q5_0, avx2::tile_q5_1,
                          avx2::tile_q8_0)
        tables.floats[1] = {avx2::dot, avx2::axpy, scalar::swiglu, scalar::attend};
    }
    {
        auto& t = tables.by_isa[static_cast<int>(Isa::avx512)];
        EMBER_LEGACY_ROWS(avx512, avx512::tile_q4_0, avx512::tile_q4_1, avx512::tile_q5_0,
                          avx512::tile_q5_1, avx512::tile_q8_0)
        if (cpu().avx512bf16) t[static_cast<std::size_t>(TensorType::BF16)].vec_dot = avx512::vec_dot_bf16_dp;
        for (TensorType q : {TensorType::Q4_0, TensorType::Q5_0, TensorType::Q8_0}) {
            t[static_cast<std::size_t>(q)].quantize_act = avx512::quantize_act_q8_0;
        }
        for (TensorType q : {TensorType::Q4_1, TensorType::Q5_1}) {
            t[static_cast<std::size_t>(q)].quantize_act = avx512::quantize_act_q8_1;
        }
        tables.floats[2] = {avx512::dot, avx512::axpy, avx512::swiglu, avx512::attend};
    }
    return tables;
}

const Tables& tables() noexcept {
    static const Tables t = build_tables();
    return t;
}

}  // namespace

Isa detected_isa() noexcept {
    if (cpu().avx512) return Isa::avx512;
    if (cpu().avx2) return Isa::avx2;
    return Isa::scalar;
}

bool isa_available(Isa isa) noexcept {
    switch (isa) {
        case Isa::scalar: return true;
        case Isa::avx2: return cpu().avx2;
        case Isa::avx512: return cpu().avx512;
    }
    return false;
}

Isa active_isa() noexcept {
    static const Isa isa = choose_isa();
    return isa;
}

std::string_view isa_name(Isa isa) noexcept {
    switch (isa) {
        case Isa::scalar: return "scalar";
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
    }
    return "unknown";
}

const FloatKernels& float_kernels(Isa isa) noexcept {
    return tables().floats[static_cast<std::size_t>(isa)];
}

const TypeKernels* type_kernels(TensorType type, Isa isa) noexcept {
    const auto id = static_cast<std::size_t>(type);
    for (int i = static_cast<int>(isa); i >= 0; --i) {
        if (id < kMaxTypeId) {
            const TypeKernels& k = tables().by_isa[static_cast<std::size_t>(i)][id];
            if (k.vec_dot != nullptr) return &k;
        }
        if (const TypeKernels* k = kquant_kernels(type, static_cast<Isa>(i))) return k;
    }
    return nullptr;
}

}  // namespace ember::kernels

// The traits table: every weight type's kernels on every ISA, filled here and nowhere else.
// Each ISA starts as a copy of its parent's table (isa_parent) and overrides what it has its own
// version of, so a lookup never walks a fallback chain and every entry is complete.
#include <array>

#include "kernels/cpu_features.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/isa/isa_kernels.hpp"
#include "kernels/kquant.hpp"
#include "kernels/packed.hpp"
#include "kernels/quants.hpp"

namespace ember::kernels {
namespace {

constexpr std::size_t kMaxTypeId = 64;

// Adapters from the typed block functions to the table's void-pointer signatures.
template <class B, void (*F)(const float*, B*, std::int64_t)>
void quantize_as(const float* x, void* y, std::int64_t n) { F(x, static_cast<B*>(y), n); }
template <class B, void (*F)(const B*, float*, std::int64_t)>
void dequantize_as(const void* x, float* y, std::int64_t n) { F(static_cast<const B*>(x), y, n); }

struct IsaTable {
    bool compiled = false;
    std::array<TypeKernels, kMaxTypeId> types{};
    FloatKernels floats{};
    TypeKernels& operator[](TensorType t) { return types[static_cast<std::size_t>(t)]; }
};

struct Table {
    std::array<IsaTable, kIsaCount> isa;
    IsaTable& derive(Isa child) {  // starts `child` as a copy of its parent
        IsaTable& t = isa[static_cast<std::size_t>(child)];
        t = isa[static_cast<std::size_t>(isa_parent(child))];
        return t;
    }
};

#define EMBER_FLOATS(ns) \
    FloatKernels{ns::rmsnorm, ns::swiglu, ns::geglu, ns::add, ns::rope, ns::attend_f32, ns::attend_f16, ns::attend_q8_0}

void fill_scalar(IsaTable& t) {
    t.compiled = true;
    t.floats = EMBER_FLOATS(scalar);
    using T = TensorType;
    t[T::F32] = {T::F32, T::F32, quantize_act_f32, quantize_act_f32, dequantize_f32, scalar::vec_dot_f32};
    t[T::F16] = {T::F16, T::F32, quantize_act_f16, quantize_act_f32, dequantize_f16, scalar::vec_dot_f16};
    t[T::BF16] = {T::BF16, T::BF16, quantize_act_bf16, quantize_act_bf16, dequantize_bf16, scalar::vec_dot_bf16};
    t[T::Q4_0] = {T::Q4_0, T::Q8_0, quantize_as<BlockQ4_0, quantize_row_q4_0>, quantize_act_q8_0, dequantize_q4_0,
                  scalar::vec_dot_q4_0, nullptr, &kPackedQ4_0, scalar::packed_gemm_q4_0};
    t[T::Q4_1] = {T::Q4_1, T::Q8_1, quantize_as<BlockQ4_1, quantize_row_q4_1>, quantize_act_q8_1, dequantize_q4_1,
                  scalar::vec_dot_q4_1};
    t[T::Q5_0] = {T::Q5_0, T::Q8_0, quantize_as<BlockQ5_0, quantize_row_q5_0>, quantize_act_q8_0, dequantize_q5_0,
                  scalar::vec_dot_q5_0};
    t[T::Q5_1] = {T::Q5_1, T::Q8_1, quantize_as<BlockQ5_1, quantize_row_q5_1>, quantize_act_q8_1, dequantize_q5_1,
                  scalar::vec_dot_q5_1};
    t[T::Q8_0] = {T::Q8_0, T::Q8_0, quantize_as<BlockQ8_0, quantize_row_q8_0>, quantize_act_q8_0, dequantize_q8_0,
                  scalar::vec_dot_q8_0, nullptr, &kPackedQ8_0, scalar::packed_gemm_q8_0};
    const QuantizeActFn q8_k = quantize_as<BlockQ8K, quantize_row_q8_k>;
    t[T::Q4_K] = {T::Q4_K, T::Q8_K, quantize_as<BlockQ4K, quantize_row_q4_k>, q8_k,
                  dequantize_as<BlockQ4K, dequantize_row_q4_k>, scalar::vec_dot_q4_k, nullptr, &kPackedQ4_K,
                  scalar::packed_gemm_q4_k};
    t[T::Q5_K] = {T::Q5_K, T::Q8_K, quantize_as<BlockQ5K, quantize_row_q5_k>, q8_k,
                  dequantize_as<BlockQ5K, dequantize_row_q5_k>, scalar::vec_dot_q5_k, nullptr, &kPackedQ5_K,
                  scalar::packed_gemm_q5_k};
    t[T::Q6_K] = {T::Q6_K, T::Q8_K, quantize_as<BlockQ6K, quantize_row_q6_k>, q8_k,
                  dequantize_as<BlockQ6K, dequantize_row_q6_k>, scalar::vec_dot_q6_k, nullptr, &kPackedQ6_K,
                  scalar::packed_gemm_q6_k};
}

#define EMBER_SET_DOT_TILE(t, type, ns, name)                                                    \
    do {                                                                                         \
        (t)[TensorType::type].vec_dot = ns::vec_dot_##name;                                      \
        (t)[TensorType::type].tile = ns::tile_##name;                                            \
    } while (0)
// The float kernels of one ISA namespace: ops, F32/F16/BF16 weight rows and tiles, conversions.
#define EMBER_SET_FLOAT_ROWS(t, ns)                                                              \
    do {                                                                                         \
        (t).floats = EMBER_FLOATS(ns);                                                           \
        EMBER_SET_DOT_TILE(t, F32, ns, f32);                                                     \
        EMBER_SET_DOT_TILE(t, F16, ns, f16);                                                     \
        EMBER_SET_DOT_TILE(t, BF16, ns, bf16);                                                   \
        (t)[TensorType::F16].dequantize = ns::dequantize_f16;                                    \
        (t)[TensorType::BF16].quantize_act = ns::quantize_act_bf16;                              \
        (t)[TensorType::BF16].dequantize = ns::dequantize_bf16;                                  \
    } while (0)
#define EMBER_SET_LEGACY(t, ns)                                                                  \
    do {                                                                                         \
        EMBER_SET_DOT_TILE(t, Q4_0, ns, q4_0);                                                   \
        EMBER_SET_DOT_TILE(t, Q4_1, ns, q4_1);                                                   \
        EMBER_SET_DOT_TILE(t, Q5_0, ns, q5_0);                                                   \
        EMBER_SET_DOT_TILE(t, Q5_1, ns, q5_1);                                                   \
        EMBER_SET_DOT_TILE(t, Q8_0, ns, q8_0);                                                   \
    } while (0)
#define EMBER_SET_KQUANT(t, ns)                                                                  \
    do {                                                                                         \
        EMBER_SET_DOT_TILE(t, Q4_K, ns, q4_k);                                                   \
        EMBER_SET_DOT_TILE(t, Q5_K, ns, q5_k);                                                   \
        EMBER_SET_DOT_TILE(t, Q6_K, ns, q6_k);                                                   \
    } while (0)

// The repacked layouts (kernels/packed.hpp), preferred: matrices of these types are repacked at load.
#define EMBER_SET_PACKED(t, ns)                                                                  \
    do {                                                                                         \
        const struct { TensorType type; PackedGemmFn gemm; } packed[] = {                        \
            {TensorType::Q4_0, ns::packed_gemm_q4_0}, {TensorType::Q8_0, ns::packed_gemm_q8_0},  \
            {TensorType::Q4_K, ns::packed_gemm_q4_k}, {TensorType::Q5_K, ns::packed_gemm_q5_k},  \
            {TensorType::Q6_K, ns::packed_gemm_q6_k}};                                           \
        for (const auto& p : packed) {                                                           \
            (t)[p.type].packed_gemm = p.gemm;                                                    \
            (t)[p.type].prefer_packed = true;                                                    \
        }                                                                                        \
    } while (0)

#if defined(__x86_64__)
void fill_x86(Table& table) {
    IsaTable& avx2 = table.derive(Isa::avx2);
    EMBER_SET_FLOAT_ROWS(avx2, avx2);
    EMBER_SET_LEGACY(avx2, avx2);
    EMBER_SET_KQUANT(avx2, avx2);
    // vpmaddubsw on two 8-row halves beats the row tiles in prefill and decode (Q6_K decode is
    // even; docs/kernels-interface.md).
    EMBER_SET_PACKED(avx2, avx2);
    for (TensorType q : {TensorType::Q4_0, TensorType::Q5_0, TensorType::Q8_0}) avx2[q].quantize_act = avx2::quantize_act_q8_0;
    for (TensorType q : {TensorType::Q4_1, TensorType::Q5_1}) avx2[q].quantize_act = avx2::quantize_act_q8_1;
    for (TensorType q : {TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) avx2[q].quantize_act = avx2::quantize_act_q8_k;

    IsaTable& vnni = table.derive(Isa::avx2_vnni);
    EMBER_SET_KQUANT(vnni, avx2_vnni);
    EMBER_SET_PACKED(vnni, avx2_vnni);  // vpdpbusd on the same halves

    IsaTable& avx512 = table.derive(Isa::avx512);
    EMBER_SET_FLOAT_ROWS(avx512, avx512);
    EMBER_SET_LEGACY(avx512, avx512);
    EMBER_SET_KQUANT(avx512, avx512);
    if (cpu_features().avx512_bf16) EMBER_SET_DOT_TILE(avx512, BF16, avx512, bf16_dp);  // vdpbf16ps
    for (TensorType q : {TensorType::Q4_0, TensorType::Q5_0, TensorType::Q8_0}) {
        avx512[q].quantize_act = avx512::quantize_act_q8_0;
    }
    for (TensorType q : {TensorType::Q4_1, TensorType::Q5_1}) avx512[q].quantize_act = avx512::quantize_act_q8_1;
    for (TensorType q : {TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) avx512[q].quantize_act = avx512::quantize_act_q8_k;
    EMBER_SET_PACKED(avx512, avx512);  // vpdpbusd on 16 interleaved rows beats the row tiles
    for (TensorType q : {TensorType::Q4_0, TensorType::Q8_0}) avx512[q].decode_groups = avx512::kLegacyDecodeGroups;

    // gf2p8affineqb moves a bit to any place in one op: Q5_K/Q6_K decode unpacks its 5- and
    // 6-bit weights in 7 and 9 ops where shifts, masks and byte tests took 9 and 13.
    IsaTable& gfni = table.derive(Isa::avx512_gfni);
    gfni[TensorType::Q5_K].packed_gemm = avx512_gfni::packed_gemm_q5_k;
    gfni[TensorType::Q6_K].packed_gemm = avx512_gfni::packed_gemm_q6_k;
}
#endif

#if defined(__aarch64__)
void fill_arm(Table& table) {
    IsaTable& neon = table.derive(Isa::neon);
    EMBER_SET_FLOAT_ROWS(neon, neon);
    EMBER_SET_LEGACY(neon, neon);
    EMBER_SET_KQUANT(neon, neon);
    for (TensorType q : {TensorType::Q4_0, TensorType::Q5_0, TensorType::Q8_0}) neon[q].quantize_act = neon::quantize_act_q8_0;
    for (TensorType q : {TensorType::Q4_1, TensorType::Q5_1}) neon[q].quantize_act = neon::quantize_act_q8_1;
    for (TensorType q : {TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) neon[q].quantize_act = neon::quantize_act_q8_k;
    // smull/smlal by broadcast group on 16 interleaved rows (packed_neon.cpp): 40-56% fewer
    // instructions than the row kernels in decode (docs/kernels-interface.md).
    EMBER_SET_PACKED(neon, neon);
    IsaTable& dotprod = table.derive(Isa::neon_dotprod);
    EMBER_SET_LEGACY(dotprod, neon_dotprod);
    EMBER_SET_KQUANT(dotprod, neon_dotprod);
    // sdot by element on 16 interleaved rows (packed_neon_dotprod.cpp), preferred: no horizontal
    // sums and the float step 4 rows a vector, where the row kernels (the smmla 2x2 tiles too)
    // take a scalar float step per row, token and block.
    EMBER_SET_PACKED(dotprod, neon_dotprod);
    IsaTable& i8mm = table.derive(Isa::neon_i8mm);  // smmla tiles and packed GEMMs; the rest stays sdot
    i8mm[TensorType::Q4_0].tile = neon_i8mm::tile_q4_0;
    i8mm[TensorType::Q4_1].tile = neon_i8mm::tile_q4_1;
    i8mm[TensorType::Q5_0].tile = neon_i8mm::tile_q5_0;
    i8mm[TensorType::Q5_1].tile = neon_i8mm::tile_q5_1;
    i8mm[TensorType::Q8_0].tile = neon_i8mm::tile_q8_0;
    // smmla on the same 16-row layouts in prefill (packed_neon_i8mm.cpp): half the multiply
    // instructions of sdot; decode calls dotprod's.
    EMBER_SET_PACKED(i8mm, neon_i8mm);
}
#endif

Table build() {
    Table table;
    fill_scalar(table.isa[static_cast<std::size_t>(Isa::scalar)]);
#if defined(__x86_64__)
    fill_x86(table);
#endif
#if defined(__aarch64__)
    fill_arm(table);
#endif
    return table;
}

const Table& table() noexcept {
    static const Table t = build();
    return t;
}

}  // namespace

const TypeKernels* type_kernels(TensorType type, Isa isa) noexcept {
    const auto i = static_cast<std::size_t>(isa);
    const auto id = static_cast<std::size_t>(type);
    if (i >= kIsaCount || id >= kMaxTypeId || !table().isa[i].compiled) return nullptr;
    const TypeKernels& k = table().isa[i].types[id];
    return k.vec_dot != nullptr ? &k : nullptr;
}

const FloatKernels& float_kernels(Isa isa) noexcept {
    const auto i = static_cast<std::size_t>(isa);
    const IsaTable& t = table().isa[i < kIsaCount && table().isa[i].compiled ? i : 0];
    return t.floats;
}

}  // namespace ember::kernels

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "kernels/dispatch.hpp"

using namespace ember;
using namespace ember::kernels;

TEST_CASE("active ISA honours EMBER_ISA and the CPU", "[dispatch]") {
    CHECK(isa_available(Isa::scalar));
    CHECK(isa_available(detected_isa()));
    CHECK(isa_available(active_isa()));
    const char* env = std::getenv("EMBER_ISA");
    if (env != nullptr) {
        const std::string want = env;
        if ((want == "avx2" && isa_available(Isa::avx2)) || (want == "avx512" && isa_available(Isa::avx512)) ||
            want == "scalar") {
            CHECK(isa_name() == want);
        } else {
            CHECK(active_isa() == detected_isa());  // unavailable or unknown: best available
        }
    } else {
        CHECK(active_isa() == detected_isa());
    }
    if (isa_available(Isa::avx512)) CHECK(isa_available(Isa::avx2));
}

TEST_CASE("an emulated AVX2-only CPU never selects AVX-512", "[dispatch][qemu]") {
    // Set by tests/kernels_qemu.cmake, which runs this binary under qemu-x86_64 -cpu Haswell.
    if (std::getenv("EMBER_EXPECT_AVX2_ONLY") == nullptr) { WARN("not under emulation: skipped"); return; }
    CHECK_FALSE(isa_available(Isa::avx512));
    CHECK(isa_available(Isa::avx2));
    CHECK(active_isa() == Isa::avx2);
}

TEST_CASE("type table: every legacy type has kernels on every ISA, others none", "[dispatch]") {
    for (int i = 0; i < kIsaCount; ++i) {
        for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0,
                             TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0}) {
            const TypeKernels* k = type_kernels(t, static_cast<Isa>(i));
            REQUIRE(k != nullptr);
            CHECK(k->type == t);
            CHECK(k->vec_dot != nullptr);
            CHECK(k->quantize_act != nullptr);
            CHECK(k->dequantize != nullptr);
        }
        CHECK(type_kernels(TensorType::IQ2_XXS, static_cast<Isa>(i)) == nullptr);
    }
    CHECK(type_kernels(TensorType::Q4_0, Isa::scalar)->act_type == TensorType::Q8_0);
    CHECK(type_kernels(TensorType::Q5_1, Isa::scalar)->act_type == TensorType::Q8_1);
    CHECK(type_kernels(TensorType::F16, Isa::scalar)->act_type == TensorType::F16);
}

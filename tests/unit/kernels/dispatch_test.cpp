// ISA selection and the traits table. Each check can fail: the CPU feature reader is compared
// with the kernel's own account (/proc/cpuinfo) or, under emulation, with the CPU the emulator
// was told to be (EMBER_EXPECT_ISA, set by the qemu tests); the table is checked to give each ISA
// its own kernels where it has them and to be complete for every supported type.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "kernel_test_util.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/dispatch.hpp"

using namespace ember;
using namespace ember::kernels;

namespace {

const TensorType kSupported[] = {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0,
                                 TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                                 TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K};

// The feature words of the first "flags" (x86) or "Features" (ARM) line of /proc/cpuinfo.
std::set<std::string> cpuinfo_flags() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) != 0 && line.rfind("Features", 0) != 0) continue;
        std::istringstream words(line.substr(line.find(':') + 1));
        std::set<std::string> out;
        for (std::string w; words >> w;) out.insert(w);
        return out;
    }
    return {};
}

}  // namespace

TEST_CASE("ISA names round-trip and EMBER_ISA is honoured", "[dispatch]") {
    for (int i = 0; i < kIsaCount; ++i) {
        Isa back = Isa::scalar;
        REQUIRE(isa_from_name(isa_name(static_cast<Isa>(i)), back));
        CHECK(static_cast<int>(back) == i);
    }
    Isa ignored;
    CHECK_FALSE(isa_from_name("sse9", ignored));
    CHECK(isa_available(Isa::scalar));
    CHECK(isa_available(detected_isa()));
    const char* env = std::getenv("EMBER_ISA");
    Isa wanted = detected_isa();
    if (env != nullptr && isa_from_name(env, wanted) && isa_available(wanted)) {
        CHECK(active_isa() == wanted);
    } else {
        CHECK(active_isa() == detected_isa());  // unset, unknown or unavailable: best available
    }
    // A child ISA is only available with its parent.
    for (int i = 0; i < kIsaCount; ++i) {
        const Isa isa = static_cast<Isa>(i);
        if (isa_available(isa)) CHECK(isa_available(isa_parent(isa)));
    }
}

TEST_CASE("the CPU feature reader agrees with the kernel or the emulated CPU", "[dispatch][qemu]") {
    if (const char* expect = std::getenv("EMBER_EXPECT_ISA")) {  // under qemu: /proc/cpuinfo is the host's
        Isa want = Isa::scalar;
        REQUIRE(isa_from_name(expect, want));
        CHECK(isa_name(detected_isa()) == std::string(expect));
        return;
    }
    const auto flags = cpuinfo_flags();
    if (flags.empty()) {
        WARN("no /proc/cpuinfo feature line: nothing to compare with");
        return;
    }
    const CpuFeatures& f = cpu_features();
#if defined(__x86_64__)
    CHECK(f.avx2 == (flags.count("avx2") && flags.count("fma") && flags.count("f16c") && flags.count("bmi2")));
    CHECK(f.avx_vnni == (f.avx2 && flags.count("avx_vnni") > 0));
    CHECK(f.avx512 == (f.avx2 && flags.count("avx512f") && flags.count("avx512bw") && flags.count("avx512vl") &&
                       flags.count("avx512dq") && flags.count("avx512_vnni")));
    CHECK(f.gfni == (flags.count("gfni") > 0));
#elif defined(__aarch64__)
    CHECK(f.dotprod == (flags.count("asimddp") > 0));
    CHECK(f.i8mm == (f.dotprod && flags.count("i8mm") > 0));
#endif
    CHECK(cpu_features().avx2 == f.avx2);  // read once: the same object
    CHECK(&cpu_features() == &f);
}

TEST_CASE("traits table: complete for every supported type on every ISA, nothing else", "[dispatch]") {
    for (Isa isa : kernel_test::available_isas()) {
        for (TensorType t : kSupported) {
            INFO(std::string(isa_name(isa)) + " " + std::string(tensor_type_name(t)));
            const TypeKernels* k = type_kernels(t, isa);
            REQUIRE(k != nullptr);
            CHECK(k->type == t);
            CHECK(k->quantize != nullptr);
            CHECK(k->quantize_act != nullptr);
            CHECK(k->dequantize != nullptr);
            CHECK(k->vec_dot != nullptr);
            CHECK(k->act_type == type_kernels(t, Isa::scalar)->act_type);
            CHECK((k->packed == nullptr) == (k->packed_gemm == nullptr));
            CHECK(!(k->prefer_packed && k->packed == nullptr));
        }
        for (TensorType t : {TensorType::IQ2_XXS, TensorType::Q2_K, TensorType::Q8_K, TensorType::MXFP4}) {
            CHECK(type_kernels(t, isa) == nullptr);
        }
        const FloatKernels& f = float_kernels(isa);
        CHECK((f.rmsnorm && f.swiglu && f.geglu && f.add && f.rope && f.attend_f32 && f.attend_f16 && f.attend_q8_0));
    }
    CHECK(type_kernels(TensorType::Q4_0, Isa::scalar)->act_type == TensorType::Q8_0);
    CHECK(type_kernels(TensorType::Q5_1, Isa::scalar)->act_type == TensorType::Q8_1);
    CHECK(type_kernels(TensorType::Q6_K, Isa::scalar)->act_type == TensorType::Q8_K);
    CHECK(type_kernels(TensorType::F16, Isa::scalar)->act_type == TensorType::F32);  // F16 weights x F32 activations
}

TEST_CASE("each ISA's table entries are its own kernels where it has them", "[dispatch]") {
    // Which (ISA, type) pairs have their own vec_dot, different from the parent ISA's.
    struct Own {
        Isa isa;
        std::initializer_list<TensorType> types;
    };
    const Own own[] = {
        {Isa::avx2, {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
                     TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K,
                     TensorType::Q6_K}},
        {Isa::avx2_vnni, {TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}},
        {Isa::avx512, {TensorType::F32, TensorType::F16, TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0,
                       TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}},
        {Isa::neon, {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q4_0, TensorType::Q4_1,
                     TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K,
                     TensorType::Q6_K}},
        {Isa::neon_dotprod, {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                             TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}},
    };
    int checked = 0;
    for (const Own& o : own) {
        if (!isa_available(o.isa)) continue;
        for (TensorType t : o.types) {
            INFO(std::string(isa_name(o.isa)) + " " + std::string(tensor_type_name(t)));
            CHECK(type_kernels(t, o.isa)->vec_dot != type_kernels(t, isa_parent(o.isa))->vec_dot);
            ++checked;
        }
        CHECK(float_kernels(o.isa).attend_f32 != float_kernels(Isa::scalar).attend_f32);
    }
    // Repacking is preferred exactly where a SIMD packed kernel exists (AVX-512 today).
    for (Isa isa : kernel_test::available_isas()) {
        for (TensorType t : kSupported) {
            const TypeKernels* k = type_kernels(t, isa);
            INFO(std::string(isa_name(isa)) + " " + std::string(tensor_type_name(t)));
            CHECK(k->prefer_packed == (k->packed != nullptr && k->packed_gemm != type_kernels(t, Isa::scalar)->packed_gemm));
        }
    }
    // avx512_gfni: its own packed decode for the K-quants with 5- and 6-bit weights, the rest avx512's.
    if (isa_available(Isa::avx512_gfni)) {
        for (TensorType t : kSupported) {
            INFO(tensor_type_name(t));
            const bool own_packed = t == TensorType::Q5_K || t == TensorType::Q6_K;
            CHECK((type_kernels(t, Isa::avx512_gfni)->packed_gemm != type_kernels(t, Isa::avx512)->packed_gemm) == own_packed);
            CHECK(type_kernels(t, Isa::avx512_gfni)->vec_dot == type_kernels(t, Isa::avx512)->vec_dot);
            ++checked;
        }
    }
    if (checked == 0) WARN("no SIMD ISA on this CPU: only the scalar table was checked");
}

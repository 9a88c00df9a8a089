#include "kernels/cpu_features.hpp"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>

#include <cstddef>
#endif

namespace ember::kernels {
namespace {

CpuFeatures read_features() noexcept {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi2");
    f.avx_vnni = f.avx2 && __builtin_cpu_supports("avxvnni");
    f.avx512 = f.avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vnni");
    f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
    f.gfni = __builtin_cpu_supports("gfni");
#elif defined(__aarch64__)
    f.neon = true;  // mandatory in ARMv8-A
#if defined(__linux__)
    const unsigned long hwcap = getauxval(AT_HWCAP);
    const unsigned long hwcap2 = getauxval(AT_HWCAP2);
    f.dotprod = (hwcap & HWCAP_ASIMDDP) != 0;
    f.i8mm = f.dotprod && (hwcap2 & HWCAP2_I8MM) != 0;
#elif defined(__APPLE__)
    f.dotprod = true;  // every Apple Silicon core has FEAT_DotProd; FEAT_I8MM from M2 (macOS 12+ says)
    int i8mm = 0;
    std::size_t len = sizeof i8mm;
    f.i8mm = sysctlbyname("hw.optional.arm.FEAT_I8MM", &i8mm, &len, nullptr, 0) == 0 && i8mm != 0;
#endif
#endif
    return f;
}

}  // namespace

const CpuFeatures& cpu_features() noexcept {
    static const CpuFeatures features = read_features();
    return features;
}

}  // namespace ember::kernels

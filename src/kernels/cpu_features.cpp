#include "kernels/cpu_features.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#elif defined(__aarch64__) && defined(__APPLE__)
#include <sys/sysctl.h>

#include <cstddef>
#endif

namespace ember::kernels {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// cpuid and xgetbv read directly rather than through __builtin_cpu_supports, whose feature names
// differ between compilers (Clang 14 rejects "f16c" and "avxvnni" at compile time).
struct CpuidRegs {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned subleaf) noexcept {
    CpuidRegs r;
    if (static_cast<unsigned>(__get_cpuid_max(0, nullptr)) < leaf) return {};
    if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) return {};
    return r;
}

constexpr bool bit(unsigned reg, int n) noexcept { return ((reg >> n) & 1u) != 0; }

// The register state the OS saves across context switches (XCR0); 0 where xgetbv is not usable.
unsigned long long os_saved_state(const CpuidRegs& leaf1) noexcept {
    if (!bit(leaf1.ecx, 27)) return 0;  // OSXSAVE
    unsigned lo = 0, hi = 0;
    asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (static_cast<unsigned long long>(hi) << 32) | lo;
}
#endif

CpuFeatures read_features() noexcept {
    CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
    const CpuidRegs l1 = cpuid(1, 0), l7 = cpuid(7, 0), l7s1 = cpuid(7, 1);
    const unsigned long long xcr0 = os_saved_state(l1);
    const bool ymm_saved = (xcr0 & 0x06) == 0x06;  // SSE and AVX state
    const bool zmm_saved = (xcr0 & 0xe6) == 0xe6;  // and the opmasks and the upper ZMM state
    f.avx2 = ymm_saved && bit(l1.ecx, 28) /* AVX */ && bit(l7.ebx, 5) /* AVX2 */ && bit(l1.ecx, 12) /* FMA */ &&
             bit(l1.ecx, 29) /* F16C */ && bit(l7.ebx, 8) /* BMI2 */;
    f.avx_vnni = f.avx2 && bit(l7s1.eax, 4);
    f.avx512 = f.avx2 && zmm_saved && bit(l7.ebx, 16) /* F */ && bit(l7.ebx, 30) /* BW */ &&
               bit(l7.ebx, 31) /* VL */ && bit(l7.ebx, 17) /* DQ */ && bit(l7.ecx, 11) /* VNNI */;
    f.avx512_bf16 = f.avx512 && bit(l7s1.eax, 5);
    f.gfni = bit(l7.ecx, 8);
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

// The one place ember reads what the CPU can do: cpuid (with the OS's xgetbv check)
// on x86-64, HWCAP/HWCAP2 from getauxval on ARM64. Read once, cached for the process.
#pragma once

namespace ember::kernels {

struct CpuFeatures {
    // x86-64
    bool avx2 = false;        ///< AVX2 + FMA + F16C + BMI2 (Haswell and later)
    bool avx_vnni = false;    ///< AVX-VNNI: VEX vpdpbusd/vpdpwssd on ymm (Alder Lake, Zen 5)
    bool avx512 = false;      ///< AVX-512 F, BW, VL, DQ and VNNI (Ice Lake, Zen 4)
    bool avx512_bf16 = false; ///< vdpbf16ps
    bool gfni = false;        ///< gf2p8affineqb (Ice Lake, Zen 4; EVEX form with AVX-512)
    // ARM64
    bool neon = false;        ///< Advanced SIMD (always on ARMv8-A)
    bool dotprod = false;     ///< sdot/udot (ARMv8.2 FEAT_DotProd, HWCAP_ASIMDDP)
    bool i8mm = false;        ///< smmla/ummla/usdot (FEAT_I8MM, HWCAP2_I8MM)
};

/// Features of the CPU this process runs on (and that the OS enables).
const CpuFeatures& cpu_features() noexcept;

}  // namespace ember::kernels

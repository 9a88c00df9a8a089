#include "kernels/dispatch.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/cpu_features.hpp"

namespace ember::kernels {
namespace {

constexpr std::string_view kIsaNames[kIsaCount] = {"scalar", "avx2", "avx2_vnni", "avx512", "avx512_gfni",
                                                   "neon", "neon_dotprod", "neon_i8mm"};

Isa choose_isa() noexcept {
    const Isa best = detected_isa();
    const char* env = std::getenv("EMBER_ISA");
    if (env == nullptr || *env == '\0') return best;
    Isa wanted = best;
    if (!isa_from_name(env, wanted)) {
        std::string known;
        for (std::string_view n : kIsaNames) known += (known.empty() ? "" : ", ") + std::string(n);
        std::fprintf(stderr, "ember: EMBER_ISA=%s is not one of %s; using %s\n", env, known.c_str(),
                     isa_name(best).data());
        return best;
    }
    if (!isa_available(wanted)) {
        std::fprintf(stderr, "ember: EMBER_ISA=%s is not supported by this CPU or build; using %s\n",
                     env, isa_name(best).data());
        return best;
    }
    return wanted;
}

}  // namespace

bool isa_available(Isa isa) noexcept {
    const CpuFeatures& f = cpu_features();
    switch (isa) {
        case Isa::scalar: return true;
#if defined(__x86_64__)
        case Isa::avx2: return f.avx2;
        case Isa::avx2_vnni: return f.avx_vnni;
        case Isa::avx512: return f.avx512;
        case Isa::avx512_gfni: return f.avx512 && f.gfni;
#elif defined(__aarch64__)
        case Isa::neon: return f.neon;
        case Isa::neon_dotprod: return f.dotprod;
        case Isa::neon_i8mm: return f.i8mm;
#endif
        default: return false;
    }
}

Isa detected_isa() noexcept {
    for (Isa isa : {Isa::avx512_gfni, Isa::avx512, Isa::avx2_vnni, Isa::avx2, Isa::neon_i8mm, Isa::neon_dotprod, Isa::neon}) {
        if (isa_available(isa)) return isa;
    }
    return Isa::scalar;
}

Isa active_isa() noexcept {
    static const Isa isa = choose_isa();
    return isa;
}

std::string_view isa_name(Isa isa) noexcept {
    const auto i = static_cast<int>(isa);
    return i >= 0 && i < kIsaCount ? kIsaNames[i] : std::string_view("unknown");
}

bool isa_from_name(std::string_view name, Isa& isa) noexcept {
    for (int i = 0; i < kIsaCount; ++i) {
        if (kIsaNames[i] == name) {
            isa = static_cast<Isa>(i);
            return true;
        }
    }
    return false;
}

}  // namespace ember::kernels

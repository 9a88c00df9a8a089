#include "model/arch.hpp"

#include <array>

namespace ember::model {
namespace {

constexpr std::array<const ArchDescription*, 6> kAll = {&kArchLlama, &kArchQwen2, &kArchQwen3,
                                                         &kArchPhi3, &kArchGemma2, &kArchGemma3};

}  // namespace

const ArchDescription* find_arch(std::string_view name) noexcept {
    for (const ArchDescription* a : kAll) {
        if (a->name == name) return a;
    }
    return nullptr;
}

std::span<const ArchDescription* const> all_archs() noexcept { return kAll; }

}  // namespace ember::model

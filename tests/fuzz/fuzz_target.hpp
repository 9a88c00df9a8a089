// One fuzz target: a function of arbitrary bytes that must return normally, whatever they are
// (ember::Error is the expected way to refuse them; anything else escaping, a crash, a sanitizer
// report or a hang is a bug). Built two ways (tests/fuzz.cmake):
// - with -DEMBER_FUZZ=ON and Clang, each target is its own libFuzzer executable (fuzz_NAME);
// - in every test build, all targets are linked into fuzz_replay, which runs them over the
//   inputs committed in tests/fuzz/corpus/NAME/: earlier findings stay fixed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ember_fuzz {

using Target = void (*)(const std::uint8_t* data, std::size_t size);

/// Registers a target for fuzz_replay; returns true (for a static initializer).
bool add_target(const char* name, Target target);

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

}  // namespace ember_fuzz

#ifdef EMBER_LIBFUZZER
#define EMBER_FUZZ_TARGET(name)                                                               \
    static void fuzz_##name(const std::uint8_t* data, std::size_t size);                      \
    extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {       \
        fuzz_##name(data, size);                                                              \
        return 0;                                                                             \
    }                                                                                         \
    static void fuzz_##name(const std::uint8_t* data, std::size_t size)
#else
#define EMBER_FUZZ_TARGET(name)                                                               \
    static void fuzz_##name(const std::uint8_t* data, std::size_t size);                      \
    [[maybe_unused]] static const bool registered_##name = ember_fuzz::add_target(#name, fuzz_##name); \
    static void fuzz_##name(const std::uint8_t* data, std::size_t size)
#endif

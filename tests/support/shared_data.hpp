// Locates ../shared (models, references, tokenizer suites) for tests.
// EMBER_SHARED_DIR in the environment wins over the CMake option EMBER_SHARED_DIR.
// Tests that need a file call require_shared_file(), which skips the test with a clear message
// (as a Catch2 warning plus an early return) when the data is absent.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ember_test {

inline std::filesystem::path shared_dir() {
    if (const char* env = std::getenv("EMBER_SHARED_DIR"); env && *env) return env;
    return EMBER_DEFAULT_SHARED_DIR;
}

/// Path of a file under the shared folder (e.g. "models/stories260K.gguf").
inline std::filesystem::path shared_file(const std::string& relative) {
    return shared_dir() / relative;
}

inline bool has_shared_file(const std::string& relative) {
    return std::filesystem::exists(shared_file(relative));
}

}  // namespace ember_test

/// Skips the current test case (with a warning naming the file) when shared data is missing.
#define EMBER_REQUIRE_SHARED(relative)                                                      \
    do {                                                                                    \
        if (!ember_test::has_shared_file(relative)) {                                       \
            WARN("SKIPPED: shared data not found: " << ember_test::shared_file(relative)    \
                 << " (set EMBER_SHARED_DIR)");                                             \
            return;                                                                         \
        }                                                                                   \
    } while (0)

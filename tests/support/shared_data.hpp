// Locates ../shared (models, references, tokenizer suites) for tests.
// EMBER_SHARED_DIR in the environment wins over the CMake option EMBER_SHARED_DIR.
// Missing shared data fails the test in CI (CI=true or CI=1 in the environment, as CI sets it)
// and skips it with a warning naming the file elsewhere: EMBER_REQUIRE_SHARED returns from the
// test case, EMBER_SHARED_MISSING is for loops over optional files.
#pragma once

#include <catch2/catch.hpp>

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

/// Whether the tests run in CI, where missing shared data is an error.
inline bool in_ci() {
    const char* ci = std::getenv("CI");
    return ci != nullptr && (std::string(ci) == "true" || std::string(ci) == "1");
}

/// Reports a missing shared file: a failure in CI, a warning elsewhere. Returns true.
inline bool report_missing_shared(const std::string& relative) {
    if (in_ci()) {
        FAIL_CHECK("shared data not found in CI: " << shared_file(relative) << " (set EMBER_SHARED_DIR)");
    } else {
        WARN("SKIPPED: shared data not found: " << shared_file(relative) << " (set EMBER_SHARED_DIR)");
    }
    return true;
}

}  // namespace ember_test

/// True (after reporting it) when `relative` is missing: `if (EMBER_SHARED_MISSING(f)) continue;`
#define EMBER_SHARED_MISSING(relative) \
    (!ember_test::has_shared_file(relative) && ember_test::report_missing_shared(relative))

/// Ends the current test case when shared data is missing (a failure in CI, a skip elsewhere).
#define EMBER_REQUIRE_SHARED(relative)                          \
    do {                                                        \
        if (EMBER_SHARED_MISSING(relative)) return;             \
    } while (0)

// Sanitizer builds (ASan/UBSan, TSan) run ember 10-20x slower. A test that repeats one check over
// many equivalent cases (prompts, draft lengths, cut points) runs every case in Release and an
// evenly spread subset under the sanitizers: each code path still runs instrumented, and CI's two
// cores finish in time.
#pragma once

#include <cstddef>
#include <vector>

namespace ember_test {

#if defined(EMBER_TEST_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Every case in Release; under the sanitizers every `stride`-th, the first and the last kept.
template <typename T>
std::vector<T> sanitized_subset(const std::vector<T>& all, std::size_t stride) {
    if (!kSanitized || stride <= 1) return all;
    std::vector<T> kept;
    for (std::size_t i = 0; i < all.size(); i += stride) kept.push_back(all[i]);
    if (!all.empty() && (all.size() - 1) % stride != 0) kept.push_back(all.back());
    return kept;
}

}  // namespace ember_test

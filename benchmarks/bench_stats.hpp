// Statistics shared by the benchmarks (header only: every benchmark is its own executable).
#pragma once

#include <algorithm>
#include <vector>

namespace ember::bench {

/// Median of the samples (the upper one for an even count; 0 when there are none).
inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace ember::bench

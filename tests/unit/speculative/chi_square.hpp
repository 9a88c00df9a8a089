// Pearson's chi-square goodness-of-fit test for the sampling-distribution tests.
#pragma once

#include <cmath>
#include <map>
#include <vector>

namespace spec_test {

struct ChiSquare {
    double statistic = 0.0;
    int df = 0;
    double critical = 0.0;  ///< Exceeded with probability ~1e-6 when the counts follow `expected`.
    bool fits() const { return statistic < critical; }
};

/// Upper 1e-6 quantile of chi-square with df degrees of freedom (Wilson-Hilferty; z = 4.753).
inline double chi_square_critical(int df) {
    const double k = df, z = 4.753;
    const double t = 1.0 - 2.0 / (9.0 * k) + z * std::sqrt(2.0 / (9.0 * k));
    return k * t * t * t;
}

/// Observed counts against probabilities (over the same keys; counts of keys without
/// probability make the test fail). Cells expected fewer than 5 times are pooled into one.
template <class Key>
ChiSquare chi_square(const std::map<Key, long>& counts, const std::map<Key, double>& probs, long n) {
    ChiSquare r;
    double pooled_expected = 0.0, pooled_observed = 0.0;
    int cells = 0;
    for (const auto& [key, p] : probs) {
        const double expected = p * static_cast<double>(n);
        const auto it = counts.find(key);
        const double observed = it == counts.end() ? 0.0 : static_cast<double>(it->second);
        if (expected < 5.0) {
            pooled_expected += expected;
            pooled_observed += observed;
            continue;
        }
        r.statistic += (observed - expected) * (observed - expected) / expected;
        ++cells;
    }
    for (const auto& [key, c] : counts) {
        if (probs.find(key) == probs.end()) pooled_observed += static_cast<double>(c);  // impossible outcome
    }
    if (pooled_expected > 0.0 || pooled_observed > 0.0) {
        const double e = std::max(pooled_expected, 1e-9);
        r.statistic += (pooled_observed - e) * (pooled_observed - e) / e;
        ++cells;
    }
    r.df = std::max(cells - 1, 1);
    r.critical = chi_square_critical(r.df);
    return r;
}

}  // namespace spec_test

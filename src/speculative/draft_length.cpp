#include "speculative/draft_length.hpp"

#include <algorithm>

namespace ember::speculative {
namespace {

constexpr double kDecay = 0.9;          // per step: about the last 10 steps count
constexpr double kPriorAccepted = 1.5;  // prior: 1.5 of 2 tested tokens accepted
constexpr double kPriorTested = 2.0;

}  // namespace

DraftLength::DraftLength(int max, bool adaptive, double cost)
    : max_(std::max(max, 1)), adaptive_(adaptive), cost_(std::max(cost, 0.0)) {
    choose();
}

double DraftLength::acceptance() const noexcept {
    return (accepted_ + kPriorAccepted) / (tested_ + kPriorTested);
}

void DraftLength::record(int accepted, bool rejected) {
    accepted_ = kDecay * accepted_ + accepted;
    tested_ = kDecay * tested_ + accepted + (rejected ? 1 : 0);
    choose();
}

void DraftLength::reset() {
    accepted_ = tested_ = 0.0;
    choose();
}

void DraftLength::choose() {
    if (!adaptive_) {
        next_ = max_;
        return;
    }
    const double a = acceptance();
    double expected = 1.0, power = 1.0, best = 0.0;
    for (int k = 1; k <= max_; ++k) {
        power *= a;
        expected += power;  // 1 + a + ... + a^k
        const double value = expected / (1.0 + cost_ * k);
        if (value > best) {
            best = value;
            next_ = k;
        }
    }
}

}  // namespace ember::speculative

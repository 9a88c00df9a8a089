// A fixed, portable random number generator for sampling: xoshiro256** (Blackman and Vigna)
// seeded through splitmix64, with uniform doubles built from its top 53 bits. Unlike the
// <random> distributions, every platform and library version gives the same numbers.
#pragma once

#include <array>
#include <cstdint>

namespace ember::sampling {

class Rng {
public:
    using State = std::array<std::uint64_t, 4>;

    explicit Rng(std::uint64_t seed = 0) { reseed(seed); }

    /// Fills the state from `seed` with splitmix64 (never all zero).
    void reseed(std::uint64_t seed);

    /// The next 64 random bits.
    std::uint64_t next();

    /// A uniform double in [0, 1).
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    const State& state() const noexcept { return state_; }
    /// Sets the raw state; the caller checks it is not all zero (valid_state).
    void set_state(const State& s) noexcept { state_ = s; }
    static bool valid_state(const State& s) noexcept { return (s[0] | s[1] | s[2] | s[3]) != 0; }

private:
    State state_{};
};

}  // namespace ember::sampling

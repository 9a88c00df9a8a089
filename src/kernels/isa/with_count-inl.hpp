// Turns a run-time count into a template argument: kernels take their token count at compile
// time (register tiles), and a sweep's last few tokens arrive as a run-time remainder.
//   with_count<7>(n, [&]<int N>() { kernel<N>(...); });
// Kernel code only: no STL.
#pragma once

#include <cstdint>

namespace ember::kernels {

/// Calls f.template operator()<n>() for n in [1, kMax]; any other n calls nothing.
template <int kMax, class F>
inline void with_count(std::int64_t n, F&& f) {
    if constexpr (kMax > 0) {
        if (n == kMax) {
            f.template operator()<kMax>();
        } else {
            with_count<kMax - 1>(n, f);
        }
    }
}

}  // namespace ember::kernels

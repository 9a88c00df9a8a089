// A software prefetch that stays in the binary. GCC 12 deletes a loop whose body is nothing but
// __builtin_prefetch (it has no effect the compiler must keep); the empty asm takes the address,
// which keeps the loop and emits no instruction.
#pragma once

namespace ember::kernels {

/// Prefetches the line holding p for reading; kLocality as __builtin_prefetch's (3: all levels).
template <int kLocality = 3>
inline void prefetch_line(const void* p) noexcept {
    __builtin_prefetch(p, 0, kLocality);
    asm volatile("" : : "r"(p));
}

}  // namespace ember::kernels

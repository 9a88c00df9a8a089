#include "runtime/parallel.hpp"

#include <thread>

namespace ember {

int hardware_threads() noexcept {
    const unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace ember

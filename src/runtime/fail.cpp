#include "runtime/fail.hpp"

namespace ember {

void fail(const std::string& message) { throw Error(message); }

void assert_fail(const char* expr, const char* file, int line) noexcept {
    std::fprintf(stderr, "ember: internal error: %s (%s:%d)\n", expr, file, line);
    std::abort();
}

}  // namespace ember

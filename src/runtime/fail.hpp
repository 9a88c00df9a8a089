// The single place ember throws from, and the always-on invariant check.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ember/error.hpp"

namespace ember {

/// Throws ember::Error(message). Every load, configuration and input error goes through here.
[[noreturn]] void fail(const std::string& message);

/// Aborts with file:line for a broken internal invariant (a bug, never bad input).
[[noreturn]] void assert_fail(const char* expr, const char* file, int line) noexcept;

}  // namespace ember

#define EMBER_ASSERT(cond) \
    ((cond) ? static_cast<void>(0) : ::ember::assert_fail(#cond, __FILE__, __LINE__))
#ifndef NDEBUG
#define EMBER_DASSERT(cond) EMBER_ASSERT(cond)
#else
#define EMBER_DASSERT(cond) static_cast<void>(0)
#endif

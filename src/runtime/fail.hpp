// The single place ember throws from, and the always-on invariant check.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "ember/error.hpp"

namespace ember {

/// Throws ember::Error(printable(message)): one printable line, whatever bytes `message` quotes.
/// Every load, configuration and input error goes through here.
[[noreturn]] void fail(const std::string& message);

/// Rethrows `e` with "name: " in front unless its message already starts with `name` (for
/// errors raised below a layer that knows the file, so that every message names it).
[[noreturn]] void fail_naming(const std::string& name, const Error& e);

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

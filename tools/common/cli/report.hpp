// How the ember tools and ember-chat report: one printable line per error on stderr, and the
// exit codes every tool shares (0 success, 1 runtime error, 2 bad command line).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace ember::cli {

/// Prints "TOOL: error: MESSAGE" as one line on stderr; the message goes through
/// ember::printable (control bytes, NUL and bytes that are not UTF-8 shown as \xNN).
void print_error(std::string_view tool, std::string_view message);

/// Runs `body` and returns its exit code; a UsageError prints one line and returns 2, any other
/// exception (ember::Error, an I/O error, std::bad_alloc) prints one line and returns 1.
int run_tool(std::string_view tool, const std::function<int()>& body);

/// "512 B", "1.5 KiB", "64.0 MiB", "2.00 GiB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace ember::cli

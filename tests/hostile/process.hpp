// Runs a program as a child process with a time limit, an address-space limit (ulimit -v) and
// its stdin from a file or a string, capturing stdout and stderr (each capped).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember_test {

struct RunOptions {
    std::string stdin_path = "/dev/null";  ///< Used when stdin_data is empty.
    std::string stdin_data;                ///< Written to the child's stdin through a pipe.
    double timeout_seconds = 10.0;         ///< The child is killed (SIGKILL) after this.
    std::uint64_t address_limit = 0;       ///< RLIMIT_AS of the child in bytes; 0: none.
    std::string working_dir;               ///< The child's working folder ("" = the test's).
};

struct RunResult {
    int exit_code = -1;      ///< -1 when killed by a signal.
    int signal = 0;          ///< The signal that ended it, 0 if none.
    bool timed_out = false;
    double seconds = 0.0;
    std::uint64_t max_rss_bytes = 0;
    std::string out, err;

    std::string describe() const;  ///< "exit 1 in 0.03 s, 12.3 MiB" / "signal 6 ..." for messages.
};

RunResult run_process(const std::vector<std::string>& argv, const RunOptions& options = {});

/// True for a build with ASan/UBSan or TSan (no address-space limit, longer time limits).
constexpr bool kSanitized =
#if defined(EMBER_TEST_SANITIZED)
    true;
#else
    false;
#endif

}  // namespace ember_test

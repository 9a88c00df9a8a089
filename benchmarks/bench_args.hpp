// Command-line reading shared by the benchmarks (header only: every benchmark is its own
// executable). A missing value ends the program with status 2, as a usage error does.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ember::bench {

/// Walks argv: `flag()` is the current argument, `value()` takes the one after it.
class Args {
public:
    Args(int argc, char** argv) : argc_(argc), argv_(argv) {}

    bool next() { return ++i_ < argc_; }
    std::string flag() const { return argv_[i_]; }

    std::string value() {
        if (i_ + 1 >= argc_) {
            std::fprintf(stderr, "missing value for %s\n", argv_[i_]);
            std::exit(2);
        }
        return argv_[++i_];
    }
    int int_value() { return std::atoi(value().c_str()); }

    /// Prints "usage: PROGRAM synopsis" and ends the program with status 2.
    [[noreturn]] void usage(const char* synopsis) const {
        std::fprintf(stderr, "usage: %s %s\n", argv_[0], synopsis);
        std::exit(2);
    }

    /// Ends the program with status 2 and `message` when a required argument is missing.
    static void require(bool present, const char* message) {
        if (present) return;
        std::fprintf(stderr, "%s\n", message);
        std::exit(2);
    }

    /// The whole file named by the next argument (a prompt given with -f).
    std::string file_value() {
        std::ifstream in(value());
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

private:
    int argc_;
    char** argv_;
    int i_ = 0;
};

}  // namespace ember::bench

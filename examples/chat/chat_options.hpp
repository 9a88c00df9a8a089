// Command-line options of ember-chat.
#pragma once

#include <stdexcept>
#include <string>

#include "ember/sampler.hpp"

namespace ember_chat {

/// A bad command line (exit code 2).
class UsageError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Options {
    std::string model;
    std::string prompt;
    int n_predict = -1;   // -1: until end of generation or a full context
    int threads = 0;
    int context = 0;
    bool quiet = false;
    bool help = false;
    ember::SamplerOptions sampler;
};

/// Parses argv; throws UsageError naming the flag on unknown flags or bad values.
Options parse_options(int argc, char** argv);

const char* usage_text();

}  // namespace ember_chat

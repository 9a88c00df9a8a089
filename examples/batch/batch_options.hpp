// Command line and prompt file of ember-batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ember/types.hpp"

namespace ember_batch {

struct Options {
    std::string model, prompts_file;
    int n_predict = 64;
    int parallel = 4;
    int context = 0;
    int threads = 0;
    float temperature = 0.8f;
    std::uint64_t seed = 0;
    bool has_seed = false;
    bool json = false;
    ember::KvType kv_type = ember::KvType::f32;
    long long kv_tokens = 0;  // 0: room for every prompt's full context
    bool prefix_cache = true;
    bool help = false;
};

const char* usage_text();
/// Throws ember::cli::UsageError naming the flag for unknown flags and out-of-range values.
Options parse_options(int argc, char** argv);
/// The prompts of a regular file (or stdin for "-"), one per line ("\r\n" too); empty lines are
/// skipped. Throws ember::Error naming the file when it cannot be read, is not a regular file,
/// is over the prompt limit or holds no prompt.
std::vector<std::string> read_prompts(const std::string& path);

}  // namespace ember_batch

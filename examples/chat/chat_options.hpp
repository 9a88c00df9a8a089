// Command-line options of ember-chat.
#pragma once

#include <string>
#include <vector>

#include "cli/args.hpp"
#include "ember/sampler.hpp"

namespace ember_chat {

/// A bad command line (exit code 2).
using UsageError = ember::cli::UsageError;

struct Options {
    std::string model;
    std::string prompt;
    bool has_prompt = false;     // -p or -f given: one turn, then exit
    int n_predict = -1;          // -1: until end of generation or a full context
    int threads = 0;
    bool use_mmap = true;  // --no-mmap: read the file into memory
    bool mlock = false;    // --mlock: lock the weights into RAM
    int context = 0;
    ember::KvType kv_type = ember::KvType::f32;  // --kv-type
    int keep = 0;                // --keep: tokens kept by a context shift
    bool context_shift = false;  // --context-shift: shift instead of stopping when full
    bool completion = false;     // --completion: raw text continuation, no chat template
    std::string system;          // --system
    std::string chat_template;   // --chat-template FILE: its content
    std::vector<std::string> stop;  // --stop (repeatable)
    std::string grammar_file;    // --grammar / --json-schema FILE (for messages)
    std::string draft;           // --draft MODEL: speculative decoding with a draft model
    int draft_max = 8;           // --draft-max N: most tokens proposed per step
    int lookup = 0;              // --lookup N: speculative decoding by prompt lookup (n-gram size)
    int beams = 0;               // --beams B: beam search with B beams (0: off)
    int samples = 0;             // --samples N: N samples with seeds S..S+N-1 (0: off)
    bool quiet = false;
    bool help = false;
    ember::SamplerOptions sampler;
};

/// Parses argv; throws UsageError naming the flag on unknown flags or values out of their
/// range, and ember::Error naming the file for a -f or --chat-template file that cannot be used.
Options parse_options(int argc, char** argv);

const char* usage_text();

}  // namespace ember_chat

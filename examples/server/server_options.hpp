// Command line of ember-server.
#pragma once

#include <cstdint>
#include <string>

#include "ember/types.hpp"

namespace ember_server {

struct Options {
    std::string model;
    std::string host = "127.0.0.1";
    int port = 8080;               // 0: any free port (the one bound is printed)
    int parallel = 4;              // requests decoding at once (one Engine)
    int queue = 16;                // more requests waiting; beyond that 503 with Retry-After
    int context = 0;               // tokens per request; 0: the model's, at most 4096
    int threads = 0;
    bool use_mmap = true;  // --no-mmap
    bool mlock = false;    // --mlock
    int max_tokens = 4096;         // cap of a request's max_tokens (and its default)
    int timeout = 600;             // seconds a request may take before it is cancelled
    std::int64_t max_body = std::int64_t{8} << 20;  // bytes of a request body (413 beyond)
    std::string api_key;           // when set: Authorization: Bearer KEY on /v1/*
    std::string chat_template;     // the template's text (read from --chat-template FILE)
    std::string alias;             // model id in /v1/models and responses
    ember::KvType kv_type = ember::KvType::f32;
    std::int64_t kv_tokens = 0;    // the KV pool shared by all requests; 0: parallel x context
    bool help = false;
};

const char* usage_text();
/// Throws ember::cli::UsageError naming the flag for unknown flags and out-of-range values.
Options parse_options(int argc, char** argv);

}  // namespace ember_server

// Hyperparameters of a `llama`-architecture model (Llama 1/2/3, TinyLlama, Mistral, SmolLM),
// read and checked from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>

#include "gguf/gguf_file.hpp"

namespace ember::model {

struct LlamaConfig {
    std::string architecture;     // general.architecture
    std::int64_t n_vocab = 0;     // tokenizer.ggml.tokens length (or token_embd rows)
    std::int64_t n_ctx_train = 0; // <arch>.context_length
    std::int64_t n_embd = 0;      // <arch>.embedding_length
    std::int64_t n_layer = 0;     // <arch>.block_count
    std::int64_t n_ff = 0;        // <arch>.feed_forward_length
    std::int64_t n_head = 0;      // <arch>.attention.head_count
    std::int64_t n_head_kv = 0;   // <arch>.attention.head_count_kv (default n_head)
    std::int64_t head_dim = 0;    // n_embd / n_head (or <arch>.attention.key_length)
    std::int64_t n_rot = 0;       // <arch>.rope.dimension_count (default head_dim)
    float rope_freq_base = 10000.0f;  // <arch>.rope.freq_base
    float rms_eps = 1e-5f;            // <arch>.attention.layer_norm_rms_epsilon

    std::int64_t n_embd_q() const noexcept { return n_head * head_dim; }
    std::int64_t n_embd_kv() const noexcept { return n_head_kv * head_dim; }

    /// Reads and validates the configuration. Throws ember::Error naming the file and key.
    static LlamaConfig from_gguf(const gguf::File& file);
};

}  // namespace ember::model

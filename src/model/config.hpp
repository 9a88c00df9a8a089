// Hyperparameters of a model, read and checked from GGUF metadata as its architecture
// description (model/arch.hpp) says.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "model/arch.hpp"
#include "model/rope.hpp"

namespace ember::model {

struct ModelConfig {
    const ArchDescription* arch = nullptr;
    std::string architecture;     // general.architecture
    std::int64_t n_vocab = 0;     // tokenizer.ggml.tokens length (or token_embd rows)
    std::int64_t n_ctx_train = 0; // <arch>.context_length
    std::int64_t n_embd = 0;      // <arch>.embedding_length
    std::int64_t n_layer = 0;     // <arch>.block_count
    std::int64_t n_ff = 0;        // <arch>.feed_forward_length
    std::int64_t n_head = 0;      // <arch>.attention.head_count
    std::int64_t n_head_kv = 0;   // <arch>.attention.head_count_kv (default n_head)
    std::int64_t head_dim = 0;    // <arch>.attention.key_length (default n_embd / n_head)
    float rms_eps = 1e-5f;        // <arch>.attention.layer_norm_rms_epsilon

    RopeParams rope;        // global layers: <arch>.rope.* keys
    RopeParams rope_local;  // sliding-window layers: rope.freq_base_swa, no frequency scaling
    float attn_scale = 1.0f;      // multiplies q.k (see ArchDescription::attention)
    ScaleAt attn_scale_at = ScaleAt::scores;
    float attn_softcap = 0.0f;    // <arch>.attn_logit_softcapping (0: none)
    float final_softcap = 0.0f;   // <arch>.final_logit_softcapping (0: none)
    float embed_scale = 1.0f;     // sqrt(n_embd) when the architecture scales embeddings
    std::int64_t n_swa = 0;       // <arch>.attention.sliding_window (0: no local layers)
    std::vector<std::uint8_t> local;  // [n_layer] 1 for sliding-window layers

    std::int64_t n_rot() const noexcept { return rope.n_rot; }
    std::int64_t n_embd_q() const noexcept { return n_head * head_dim; }
    std::int64_t n_embd_kv() const noexcept { return n_head_kv * head_dim; }
    bool is_local(std::int64_t layer) const noexcept {
        return local[static_cast<std::size_t>(layer)] != 0;
    }
    const RopeParams& rope_of(std::int64_t layer) const noexcept {
        return is_local(layer) ? rope_local : rope;
    }

    /// Reads and validates the configuration. Throws ember::Error naming the file and key.
    static ModelConfig from_gguf(const gguf::File& file);
};

}  // namespace ember::model

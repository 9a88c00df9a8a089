// The weight tensors of a model, located in a GGUF file as its architecture description says,
// shape-checked and prepared for the kernels. Norm vectors and biases are converted to float
// at load (they are tiny).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "kernels/matmul.hpp"
#include "model/config.hpp"

namespace ember::model {

/// One layer. Optional parts are empty (vectors) or have no rows (matrices) when absent.
struct LayerWeights {
    std::vector<float> attn_norm;       // [n_embd]
    kernels::WeightMatrix wq;           // [n_embd_q rows][n_embd]
    kernels::WeightMatrix wk;           // [n_embd_kv][n_embd]
    kernels::WeightMatrix wv;           // [n_embd_kv][n_embd]
    kernels::WeightMatrix wqkv;         // [n_embd_q + 2 n_embd_kv][n_embd] when q/k/v are fused
    std::vector<float> bq, bk, bv;      // q/k/v biases
    std::vector<float> q_norm, k_norm;  // [head_dim] RMSNorm weights of each query/key head
    kernels::WeightMatrix wo;           // [n_embd][n_embd_q]
    std::vector<float> bo;              // [n_embd] output bias
    std::vector<float> post_attn_norm;  // [n_embd] norm of the attention output
    std::vector<float> ffn_norm;        // [n_embd]
    kernels::WeightMatrix w_gate;       // [n_ff][n_embd]; no rows when fused into w_up
    kernels::WeightMatrix w_up;         // [n_ff][n_embd], or [2 n_ff] (gate rows, then up rows)
    kernels::WeightMatrix w_down;       // [n_embd][n_ff]
    std::vector<float> post_ffw_norm;   // [n_embd] norm of the feed-forward output

    bool fused_qkv() const noexcept { return wqkv.n_rows() > 0; }
    bool fused_gate_up() const noexcept { return w_gate.n_rows() == 0; }
};

struct ModelWeights {
    const gguf::TensorInfo* token_embd = nullptr;  // [n_vocab rows][n_embd], any supported type
    std::vector<LayerWeights> layers;
    std::vector<float> output_norm;  // [n_embd]
    kernels::WeightMatrix output;    // [n_vocab][n_embd]; token_embd when tied
    bool tied_output = false;
    std::vector<float> rope_freqs;   // [n_rot / 2] Llama 3 frequency divisors, or empty
    std::vector<float> rope_long;    // [n_rot / 2] Phi-3 LongRoPE factors, or empty
    std::vector<float> rope_short;   // [n_rot / 2]

    /// The RoPE frequency divisors for a sequence with a context of n_ctx positions, as
    /// llama.cpp chooses them: rope_freqs when present, else LongRoPE's long factors when n_ctx
    /// exceeds the original training context (rope.scaling.original_context_length), else the
    /// short ones; empty for none.
    std::span<const float> rope_factors(std::int64_t n_ctx, const ModelConfig& c) const noexcept;

    /// Finds and checks every tensor. Throws ember::Error naming the file and tensor.
    /// `progress` (optional) is called with the fraction of layers prepared.
    static ModelWeights from_gguf(const gguf::File& file, const ModelConfig& config,
                                  const std::function<void(float)>& progress = {});

    /// Every matrix the forward pass multiplies by (for scratch sizing).
    std::vector<const kernels::WeightMatrix*> matrices() const;
};

}  // namespace ember::model

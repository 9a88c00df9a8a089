// The weight tensors of a llama model, located in a GGUF file, shape-checked and prepared for
// the kernels. Norm vectors are converted to float at load (they are tiny).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "kernels/matmul.hpp"
#include "model/llama_config.hpp"

namespace ember::model {

struct LayerWeights {
    std::vector<float> attn_norm;  // [n_embd]
    kernels::WeightMatrix wq;      // [n_embd_q rows][n_embd]
    kernels::WeightMatrix wk;      // [n_embd_kv][n_embd]
    kernels::WeightMatrix wv;      // [n_embd_kv][n_embd]
    kernels::WeightMatrix wo;      // [n_embd][n_embd_q]
    std::vector<float> ffn_norm;   // [n_embd]
    kernels::WeightMatrix w_gate;  // [n_ff][n_embd]
    kernels::WeightMatrix w_up;    // [n_ff][n_embd]
    kernels::WeightMatrix w_down;  // [n_embd][n_ff]
};

struct LlamaWeights {
    const gguf::TensorInfo* token_embd = nullptr;  // [n_vocab rows][n_embd], any supported type
    std::vector<LayerWeights> layers;
    std::vector<float> output_norm;  // [n_embd]
    kernels::WeightMatrix output;    // [n_vocab][n_embd]; token_embd when tied
    std::vector<float> rope_freq_factors;  // [n_rot / 2] divisors of the RoPE frequencies, or empty
    bool tied_output = false;

    /// Finds and checks every tensor. Throws ember::Error naming the file and tensor.
    /// `progress` (optional) is called with the fraction of layers prepared.
    static LlamaWeights from_gguf(const gguf::File& file, const LlamaConfig& config,
                                  const std::function<void(float)>& progress = {});

    /// Every matrix the forward pass multiplies by (for scratch sizing).
    std::vector<const kernels::WeightMatrix*> matrices() const;
};

}  // namespace ember::model

// qwen2 (Qwen2, Qwen2.5) and qwen3 (Qwen3 dense): NEOX RoPE over the whole head, SwiGLU.
// Qwen2 adds biases to q, k and v; Qwen3 instead normalizes each query and key head (RMSNorm
// over the head, before RoPE) and takes its head size from attention.key_length. Small models
// tie the output to the embeddings. (llama.cpp: src/models/qwen2.cpp, qwen3.cpp)
#include "model/arch.hpp"

namespace ember::model {

const ArchDescription kArchQwen2 = [] {
    ArchDescription a;
    a.name = "qwen2";
    a.models = "Qwen2, Qwen2.5";
    a.rope = RopeStyle::neox;
    a.layer.qkv_bias = Need::required;
    return a;
}();

const ArchDescription kArchQwen3 = [] {
    ArchDescription a;
    a.name = "qwen3";
    a.models = "Qwen3";
    a.rope = RopeStyle::neox;
    a.layer.qk_norm = Need::required;
    return a;
}();

}  // namespace ember::model

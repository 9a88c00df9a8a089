// phi3: Phi-3, Phi-3.5 and Phi-4-mini. NEOX RoPE (partial rotary allowed: Phi-4-mini rotates
// 3/4 of the head), q/k/v fused into attn_qkv (separate tensors also load), gate and up fused
// into ffn_up (gate rows first), queries scaled before q.k, LongRoPE factors
// rope_factors_long/short chosen by the sequence's context, with rope.scaling.attn_factor on
// cos/sin. llama.cpp ignores phi3.attention.sliding_window (PR 13676), and so does ember.
// (llama.cpp: src/models/phi3.cpp)
#include "model/arch.hpp"

namespace ember::model {

const ArchDescription kArchPhi3 = [] {
    ArchDescription a;
    a.name = "phi3";
    a.models = "Phi-3, Phi-3.5, Phi-4-mini";
    a.rope = RopeStyle::neox;
    a.layer.q_k_v = Need::optional;
    a.layer.qkv = Need::optional;
    a.layer.ffn_gate = Need::absent;
    a.tensors.rope_factors = Need::optional;
    a.attention.at = ScaleAt::queries;
    return a;
}();

}  // namespace ember::model

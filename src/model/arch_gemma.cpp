// gemma2 and gemma3: NEOX RoPE, GeGLU (GELU in tanh form), embeddings scaled by sqrt(n_embd),
// RMSNorm after attention and after the feed-forward (post_attention_norm, post_ffw_norm;
// GGUF norm weights already hold Gemma's 1 + w), queries scaled before q.k (1/sqrt(head size),
// or 1/sqrt(n_embd / n_head) for the 27B models: query_pre_attn_scalar), tied output.
//  - gemma2: every other layer (from the first) attends to a sliding window
//    (attention.sliding_window, default 4096); attention scores and final logits are
//    soft-capped (attn_logit_softcapping 50, final_logit_softcapping 30 by default).
//  - gemma3: five sliding-window layers, then one global; the local layers use RoPE base
//    rope.freq_base_swa (default 10000) and no frequency scaling; per-head q/k RMSNorm; no
//    soft-capping. Without a sliding window every layer is global.
// (llama.cpp: src/models/gemma2-iswa.cpp, gemma3.cpp; llama-model.cpp load_hparams)
#include "model/arch.hpp"

#include <array>

namespace ember::model {
namespace {

constexpr std::array<std::int64_t, 1> kGemma2_27B = {46};
constexpr std::array<std::int64_t, 1> kGemma3_27B = {62};

ArchDescription gemma_common() {
    ArchDescription a;
    a.rope = RopeStyle::neox;
    a.activation = Activation::gelu_tanh;
    a.layer.post_norms = Need::required;
    a.attention.at = ScaleAt::queries;
    a.embed_scale = true;
    return a;
}

}  // namespace

const ArchDescription kArchGemma2 = [] {
    ArchDescription a = gemma_common();
    a.name = "gemma2";
    a.models = "Gemma 2";
    a.attention.embd_per_head_layers = kGemma2_27B;
    a.sliding.period = 2;
    a.sliding.default_window = 4096;
    a.softcaps.enabled = true;
    a.softcaps.attn = 50.0f;
    a.softcaps.final = 30.0f;
    return a;
}();

const ArchDescription kArchGemma3 = [] {
    ArchDescription a = gemma_common();
    a.name = "gemma3";
    a.models = "Gemma 3 (text)";
    a.layer.qk_norm = Need::required;
    a.attention.embd_per_head_layers = kGemma3_27B;
    a.sliding.period = 6;
    a.sliding.default_freq_base = 10000.0f;
    return a;
}();

}  // namespace ember::model

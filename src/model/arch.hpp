// One description per model architecture: which GGUF keys and tensors it has and which parts of
// the generic decoder (model/decoder.hpp) it uses. Adding a family that is a variation of these
// parts is a new table in model/arch_<family>.cpp, not a new forward pass.
//
// Facts follow llama.cpp (src/llama-model.cpp, src/models/*.cpp), whose files these are.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace ember::model {

/// How RoPE pairs the values of a head: adjacent pairs (x[2i], x[2i+1]) ("normal", llama) or the
/// two halves (x[i], x[i + n_rot/2]) ("NEOX": qwen2, qwen3, phi3, gemma).
enum class RopeStyle : std::uint8_t { normal, neox };

/// The gated feed-forward's activation: silu(gate) * up (SwiGLU) or gelu_tanh(gate) * up (GeGLU).
enum class Activation : std::uint8_t { silu, gelu_tanh };

/// Whether a tensor (or a group of tensors) must, may, or must not be in the file.
enum class Need : std::uint8_t { absent, optional, required };

/// Where the attention scale (1/sqrt(head_dim) by default) is applied: to the scores (llama,
/// qwen: softmax(q.k * scale)), or to the queries before the dot product (phi3, gemma:
/// softmax((q * scale).k)). Same mathematics; llama.cpp rounds them differently.
enum class ScaleAt : std::uint8_t { scores, queries };

/// Per-layer tensors, by groups that are present or absent together (blk.N.<name>).
struct LayerTensors {
    Need q_k_v = Need::required;       ///< attn_q, attn_k, attn_v
    Need qkv = Need::absent;           ///< attn_qkv: q, k and v rows fused (q, then k, then v)
    Need qkv_bias = Need::absent;      ///< attn_q.bias, attn_k.bias, attn_v.bias
    Need output_bias = Need::absent;   ///< attn_output.bias
    Need qk_norm = Need::absent;       ///< attn_q_norm, attn_k_norm: RMSNorm of each head
    Need post_norms = Need::absent;    ///< post_attention_norm, post_ffw_norm (gemma)
    Need ffn_gate = Need::required;    ///< absent: ffn_up holds gate rows then up rows (2 n_ff)
};

/// Whole-model tensors besides token_embd and output_norm (always required).
struct ModelTensors {
    Need output = Need::optional;        ///< output.weight; absent: tied to token_embd
    Need rope_freqs = Need::absent;      ///< rope_freqs.weight: Llama 3 frequency divisors
    Need rope_factors = Need::absent;    ///< rope_factors_long/short.weight: Phi-3 LongRoPE
};

/// Sliding-window attention: which layers are local and what they read.
struct SlidingWindow {
    /// 0: no sliding window. n: layer il is local when il % n < n - 1 (gemma2: 2, every other
    /// layer from the first; gemma3: 6, five local then one global).
    int period = 0;
    /// Window used when <arch>.attention.sliding_window is absent; 0: the key is then required.
    std::int64_t default_window = 0;
    /// RoPE base of local layers when <arch>.rope.freq_base_swa is absent; 0: the global base.
    float default_freq_base = 0.0f;
};

/// Attention-scale rule: 1/sqrt(head_dim), except for models whose layer count is listed in
/// `embd_per_head_layers` (Gemma 2/3 27B), which use 1/sqrt(n_embd / n_head) as their
/// query_pre_attn_scalar. <arch>.attention.scale overrides both when present.
struct AttentionScale {
    ScaleAt at = ScaleAt::scores;
    std::span<const std::int64_t> embd_per_head_layers = {};
};

/// Soft-capping x -> cap * tanh(x / cap) of attention scores and of the final logits (gemma2),
/// read from <arch>.attn_logit_softcapping / <arch>.final_logit_softcapping (0: none).
struct SoftCaps {
    bool enabled = false;  ///< Whether the keys are read at all.
    float attn = 0.0f;     ///< Default when the key is absent.
    float final = 0.0f;    ///< Default when the key is absent.
};

struct ArchDescription {
    std::string_view name;    ///< general.architecture
    std::string_view models;  ///< The model families it runs (for messages and docs).
    RopeStyle rope = RopeStyle::normal;
    Activation activation = Activation::silu;
    LayerTensors layer;
    ModelTensors tensors;
    AttentionScale attention;
    SlidingWindow sliding;
    bool embed_scale = false;  ///< embeddings multiplied by sqrt(n_embd) (gemma)
    SoftCaps softcaps;
    /// Whether <arch>.rope.dimension_count may be smaller than the head (llama.cpp rejects it
    /// for llama).
    bool partial_rotary = true;
};

/// The description of `name` (general.architecture), or null when ember has none.
const ArchDescription* find_arch(std::string_view name) noexcept;

/// Every description, for messages and docs.
std::span<const ArchDescription* const> all_archs() noexcept;

// The tables (model/arch_*.cpp).
extern const ArchDescription kArchLlama;
extern const ArchDescription kArchQwen2;
extern const ArchDescription kArchQwen3;
extern const ArchDescription kArchPhi3;
extern const ArchDescription kArchGemma2;
extern const ArchDescription kArchGemma3;

}  // namespace ember::model

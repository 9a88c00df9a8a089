#include "model/llama_config.hpp"

#include <cmath>

#include "runtime/fail.hpp"

namespace ember::model {
namespace {

// Largest value accepted for any dimension: far beyond real models, small enough that products
// of two dimensions cannot overflow int64.
constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;

std::int64_t read_dim(const gguf::File& file, const std::string& key, std::int64_t min_value) {
    const std::int64_t v = file.get_u32(key);
    if (v < min_value || v > kMaxDim) {
        fail(file.name() + ": metadata key '" + key + "' has value " + std::to_string(v) +
             ", outside [" + std::to_string(min_value) + ", " + std::to_string(kMaxDim) + "]");
    }
    return v;
}

}  // namespace

LlamaConfig LlamaConfig::from_gguf(const gguf::File& file) {
    LlamaConfig c;
    c.architecture = std::string(file.get_string("general.architecture"));
    if (c.architecture != "llama") {
        fail(file.name() + ": metadata key 'general.architecture' is '" + c.architecture +
             "'; ember supports 'llama' (Llama 1/2/3, TinyLlama, Mistral, SmolLM)");
    }
    const std::string p = c.architecture + ".";
    c.n_embd = read_dim(file, p + "embedding_length", 1);
    c.n_layer = read_dim(file, p + "block_count", 1);
    c.n_ff = read_dim(file, p + "feed_forward_length", 1);
    c.n_head = read_dim(file, p + "attention.head_count", 1);
    c.n_head_kv = file.find(p + "attention.head_count_kv")
                      ? read_dim(file, p + "attention.head_count_kv", 1)
                      : c.n_head;
    c.n_ctx_train = read_dim(file, p + "context_length", 1);
    if (c.n_head % c.n_head_kv != 0) {
        fail(file.name() + ": attention.head_count (" + std::to_string(c.n_head) +
             ") is not a multiple of attention.head_count_kv (" + std::to_string(c.n_head_kv) + ")");
    }
    if (file.find(p + "attention.key_length")) {
        c.head_dim = read_dim(file, p + "attention.key_length", 1);
    } else {
        if (c.n_embd % c.n_head != 0) {
            fail(file.name() + ": embedding_length (" + std::to_string(c.n_embd) +
                 ") is not a multiple of attention.head_count (" + std::to_string(c.n_head) + ")");
        }
        c.head_dim = c.n_embd / c.n_head;
    }
    if (file.find(p + "attention.value_length") &&
        read_dim(file, p + "attention.value_length", 1) != c.head_dim) {
        fail(file.name() + ": attention.value_length differs from attention.key_length; unsupported");
    }
    c.n_rot = file.find(p + "rope.dimension_count") ? read_dim(file, p + "rope.dimension_count", 2)
                                                     : c.head_dim;
    if (c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
        fail(file.name() + ": rope.dimension_count (" + std::to_string(c.n_rot) +
             ") must be even and at most the head size (" + std::to_string(c.head_dim) + ")");
    }
    c.rope_freq_base = file.get_f32_or(p + "rope.freq_base", 10000.0f);
    c.rms_eps = file.get_f32_or(p + "attention.layer_norm_rms_epsilon", 1e-5f);
    if (!(c.rope_freq_base > 0.0f) || !std::isfinite(c.rope_freq_base)) {
        fail(file.name() + ": metadata key '" + p + "rope.freq_base' must be a positive number");
    }
    if (!(c.rms_eps > 0.0f) || !(c.rms_eps < 1.0f)) {
        fail(file.name() + ": metadata key '" + p +
             "attention.layer_norm_rms_epsilon' must be in (0, 1)");
    }
    if (const auto* scaling = file.find(p + "rope.scaling.type")) {
        const auto type = scaling->as_string(p + "rope.scaling.type");
        if (type != "none") {
            fail(file.name() + ": metadata key '" + p + "rope.scaling.type' is '" +
                 std::string(type) + "'; rope scaling is not supported yet");
        }
    }
    if (const auto* tokens = file.find("tokenizer.ggml.tokens")) {
        c.n_vocab = static_cast<std::int64_t>(tokens->as_array("tokenizer.ggml.tokens").items.size());
    }
    return c;
}

}  // namespace ember::model

#include "model/config.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/fail.hpp"

namespace ember::model {
namespace {

// Largest value accepted for any dimension: far beyond real models, small enough that products
// of two dimensions cannot overflow int64.
constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;

// Reads "<arch>.<name>" keys, with errors naming the file and the key.
class KeyReader {
public:
    KeyReader(const gguf::File& file, const std::string& arch) : file_(file), prefix_(arch + ".") {}

    std::string key(std::string_view name) const { return prefix_ + std::string(name); }
    bool has(std::string_view name) const { return file_.find(key(name)) != nullptr; }

    std::int64_t dim(std::string_view name, std::int64_t min_value) const {
        const std::int64_t v = file_.get_u32(key(name));
        if (v < min_value || v > kMaxDim) {
            bad(name, "has value " + std::to_string(v) + ", outside [" + std::to_string(min_value) +
                          ", " + std::to_string(kMaxDim) + "]");
        }
        return v;
    }
    std::int64_t dim_or(std::string_view name, std::int64_t min_value, std::int64_t fallback) const {
        return has(name) ? dim(name, min_value) : fallback;
    }

    /// A float that must be finite and > 0 (or >= 0 with `allow_zero`).
    float positive_or(std::string_view name, float fallback, bool allow_zero = false) const {
        const float v = file_.get_f32_or(key(name), fallback);
        if (!std::isfinite(v) || v < 0.0f || (v == 0.0f && !allow_zero)) {
            bad(name, "is " + std::to_string(v) + ", expected a finite number " +
                          (allow_zero ? ">= 0" : "> 0"));
        }
        return v;
    }

    std::string_view string_or(std::string_view name, std::string_view fallback) const {
        return file_.get_string_or(key(name), fallback);
    }

    [[noreturn]] void bad(std::string_view name, const std::string& why) const {
        fail(file_.name() + ": metadata key '" + key(name) + "' " + why);
    }

private:
    const gguf::File& file_;
    std::string prefix_;
};

std::string supported_list() {
    std::string s;
    for (const ArchDescription* a : all_archs()) {
        if (!s.empty()) s.append(", ");
        s.append("'").append(a->name).append("' (").append(a->models).append(")");
    }
    return s;
}

void read_rope(const KeyReader& k, const ArchDescription& arch, ModelConfig& c) {
    RopeParams& r = c.rope;
    r.style = arch.rope;
    r.n_rot = k.dim_or("rope.dimension_count", 2, c.head_dim);
    if (r.n_rot > c.head_dim || r.n_rot % 2 != 0) {
        k.bad("rope.dimension_count", "is " + std::to_string(r.n_rot) +
                                          "; it must be even and at most the head size (" +
                                          std::to_string(c.head_dim) + ")");
    }
    if (!arch.partial_rotary && r.n_rot != c.head_dim) {
        k.bad("rope.dimension_count", "is " + std::to_string(r.n_rot) + "; architecture '" +
                                          c.architecture + "' rotates the whole head (" +
                                          std::to_string(c.head_dim) + ")");
    }
    r.freq_base = k.positive_or("rope.freq_base", 10000.0f);

    // Scaling as llama.cpp reads it: the type defaults to linear, whose factor defaults to 1
    // (none); "none" never scales; YaRN mixes in the extrapolated angles (ext_factor 1).
    const std::string_view type = k.string_or("rope.scaling.type", "linear");
    if (type != "none" && type != "linear" && type != "yarn" && type != "longrope") {
        k.bad("rope.scaling.type", "is '" + std::string(type) +
                                       "'; supported: none, linear, yarn, longrope");
    }
    const float factor = k.has("rope.scaling.factor") ? k.positive_or("rope.scaling.factor", 0.0f, true)
                                                      : k.positive_or("rope.scale_linear", 0.0f, true);
    r.freq_scale = (type == "none" || factor == 0.0f) ? 1.0f : 1.0f / factor;
    r.ext_factor = type == "yarn" ? 1.0f : 0.0f;
    r.n_ctx_orig = k.dim_or("rope.scaling.original_context_length", 1, c.n_ctx_train);
    r.beta_fast = k.positive_or("rope.scaling.yarn_beta_fast", 32.0f);
    r.beta_slow = k.positive_or("rope.scaling.yarn_beta_slow", 1.0f);
    // The magnitude of cos/sin: rope.scaling.attn_factor (Phi-3 LongRoPE writes its factor
    // there), times YaRN's 1 + 0.1 ln(factor). llama.cpp computes the YaRN part as
    // get_mscale / (1 + 0.1 ln f) in the context, then * (1 + 0.1 ln(1/freq_scale)) in ggml's
    // rope; the same float steps are kept here.
    float attn_factor = 1.0f;
    if (r.ext_factor != 0.0f) {
        const float f = 1.0f / r.freq_scale;
        attn_factor = f <= 1.0f ? 1.0f : 0.1f * std::log(f) + 1.0f;
        attn_factor *= 1.0f / (1.0f + 0.1f * std::log(f));
    }
    attn_factor *= k.positive_or("rope.scaling.attn_factor", 1.0f);
    r.mscale = r.ext_factor != 0.0f ? attn_factor * (1.0f + 0.1f * std::log(1.0f / r.freq_scale))
                                    : attn_factor;

    // Local (sliding-window) layers: their own base and no frequency scaling (llama.cpp's
    // rope_freq_base_train_swa / rope_freq_scale_train_swa = 1).
    c.rope_local = r;
    c.rope_local.freq_base = k.positive_or(
        "rope.freq_base_swa", arch.sliding.default_freq_base > 0.0f ? arch.sliding.default_freq_base
                                                                    : r.freq_base);
    c.rope_local.freq_scale = 1.0f;
    c.rope_local.mscale = attn_factor;  // * (1 + 0.1 ln 1) in ggml
}

void read_attention(const KeyReader& k, const ArchDescription& arch, ModelConfig& c) {
    c.attn_scale_at = arch.attention.at;
    const auto& big = arch.attention.embd_per_head_layers;
    if (k.has("attention.scale")) {
        c.attn_scale = k.positive_or("attention.scale", 1.0f);
    } else if (std::find(big.begin(), big.end(), c.n_layer) != big.end()) {
        c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.n_embd / c.n_head));
    } else {
        c.attn_scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    }
    if (arch.softcaps.enabled) {
        c.attn_softcap = k.positive_or("attn_logit_softcapping", arch.softcaps.attn, true);
        c.final_softcap = k.positive_or("final_logit_softcapping", arch.softcaps.final, true);
    }
    if (arch.embed_scale) c.embed_scale = std::sqrt(static_cast<float>(c.n_embd));

    c.local.assign(static_cast<std::size_t>(c.n_layer), 0);
    if (arch.sliding.period > 0) {
        c.n_swa = k.dim_or("attention.sliding_window", 0, arch.sliding.default_window);
        const std::int64_t n = arch.sliding.period;
        for (std::int64_t il = 0; il < c.n_layer && c.n_swa > 0; ++il) {
            c.local[static_cast<std::size_t>(il)] = il % n < n - 1 ? 1 : 0;
        }
    }
}

}  // namespace

ModelConfig ModelConfig::from_gguf(const gguf::File& file) {
    ModelConfig c;
    c.architecture = std::string(file.get_string("general.architecture"));
    c.arch = find_arch(c.architecture);
    if (!c.arch) {
        fail(file.name() + ": metadata key 'general.architecture' is '" + c.architecture +
             "'; ember supports " + supported_list());
    }
    const KeyReader k(file, c.architecture);
    c.n_embd = k.dim("embedding_length", 1);
    c.n_layer = k.dim("block_count", 1);
    c.n_ff = k.dim("feed_forward_length", 1);
    c.n_head = k.dim("attention.head_count", 1);
    c.n_head_kv = k.dim_or("attention.head_count_kv", 1, c.n_head);
    c.n_ctx_train = k.dim("context_length", 1);
    if (c.n_head % c.n_head_kv != 0) {
        fail(file.name() + ": attention.head_count (" + std::to_string(c.n_head) +
             ") is not a multiple of attention.head_count_kv (" + std::to_string(c.n_head_kv) + ")");
    }
    if (k.has("attention.key_length")) {
        c.head_dim = k.dim("attention.key_length", 1);
    } else {
        if (c.n_embd % c.n_head != 0) {
            fail(file.name() + ": embedding_length (" + std::to_string(c.n_embd) +
                 ") is not a multiple of attention.head_count (" + std::to_string(c.n_head) +
                 ") and attention.key_length is absent");
        }
        c.head_dim = c.n_embd / c.n_head;
    }
    if (k.has("attention.value_length") && k.dim("attention.value_length", 1) != c.head_dim) {
        k.bad("attention.value_length", "differs from the key length (" +
                                            std::to_string(c.head_dim) + "); unsupported");
    }
    if (c.n_head * c.head_dim > kMaxDim) k.bad("attention.key_length", "makes the query too wide");
    c.rms_eps = k.positive_or("attention.layer_norm_rms_epsilon", 1e-5f);
    if (!(c.rms_eps < 1.0f)) k.bad("attention.layer_norm_rms_epsilon", "must be in (0, 1)");
    read_rope(k, *c.arch, c);
    read_attention(k, *c.arch, c);
    if (const auto* tokens = file.find("tokenizer.ggml.tokens")) {
        c.n_vocab = static_cast<std::int64_t>(tokens->as_array("tokenizer.ggml.tokens").items.size());
    }
    return c;
}

}  // namespace ember::model

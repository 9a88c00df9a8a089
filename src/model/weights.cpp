#include "model/weights.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "runtime/fail.hpp"
#include "runtime/zeroed_memory.hpp"

namespace ember::model {
namespace {

std::string shape_string(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (std::uint32_t i = 0; i < t.n_dims; ++i) {
        if (i) s += ", ";
        s += std::to_string(t.ne[i]);
    }
    return s + "]";
}

class TensorFinder {
public:
    TensorFinder(const gguf::File& file, const ModelConfig& c) : file_(file), c_(c), arena_(packed_bound(file)) {}

    /// Returns the arena's unused reservation once every matrix is loaded.
    void finish() { arena_.finish(); }

    const gguf::TensorInfo* find(const std::string& name) const { return file_.find_tensor(name); }

    const gguf::TensorInfo& get(const std::string& name, std::int64_t ne0, std::int64_t ne1) const {
        const gguf::TensorInfo* t = find(name);
        if (!t) fail(file_.name() + ": tensor '" + name + "' is missing");
        check_shape(*t, ne0, ne1);
        return *t;
    }

    void check_shape(const gguf::TensorInfo& t, std::int64_t ne0, std::int64_t ne1) const {
        const bool ok = t.ne[0] == ne0 && t.ne[1] == ne1 && t.ne[2] == 1 && t.ne[3] == 1;
        if (!ok) {
            fail(file_.name() + ": tensor '" + std::string(t.name) + "' (info at byte " +
                 std::to_string(t.info_offset) + ") has shape " + shape_string(t) + ", expected [" +
                 std::to_string(ne0) + (ne1 > 1 ? ", " + std::to_string(ne1) : std::string()) + "]");
        }
    }

    std::vector<float> vector(const std::string& name, std::int64_t n) const {
        const auto& t = get(name, n, 1);
        std::vector<float> v(static_cast<std::size_t>(n));
        kernels::dequantize_row(t, 0, v.data());
        return v;
    }

    /// A weight matrix; when it was repacked, the file's copy is dropped from memory at once,
    /// so loading never holds both copies of more than one tensor.
    kernels::WeightMatrix matrix(const std::string& name, std::int64_t n_cols,
                                 std::int64_t n_rows) const {
        const gguf::TensorInfo& t = get(name, n_cols, n_rows);
        kernels::WeightMatrix m = kernels::WeightMatrix::prepare(t, kernels::Packing::automatic, &file_, &arena_);
        if (m.packed()) file_.release(t);
        return m;
    }

    /// A matrix that shares its bytes with another use (tied embeddings): never released.
    kernels::WeightMatrix shared_matrix(const gguf::TensorInfo& t) const {
        return kernels::WeightMatrix::prepare(t, kernels::Packing::automatic, &file_, &arena_);
    }

    /// Whether the group of tensors `names` is there, as `need` allows: all or none of them
    /// (a partial group is an error naming the first missing tensor).
    bool group(Need need, std::initializer_list<std::string> names) const {
        std::size_t found = 0;
        for (const auto& n : names) found += find(n) ? 1 : 0;
        if (need == Need::absent) return false;  // unused by this architecture
        if (found == 0 && need == Need::optional) return false;
        for (const auto& n : names) {
            if (!find(n)) {
                fail(file_.name() + ": tensor '" + n + "' is missing (architecture '" +
                     c_.architecture + "')");
            }
        }
        return true;
    }

private:
    /// Room for a repacked copy of every matrix-shaped tensor of the file (reserved, not touched).
    static std::size_t packed_bound(const gguf::File& file) noexcept {
        std::size_t total = 0;
        for (const auto& t : file.tensors()) {
            if (t.ne[2] != 1 || t.ne[3] != 1) continue;
            const std::size_t b = kernels::WeightMatrix::packed_bytes_bound(t);
            if (b > SIZE_MAX - 64 || total > SIZE_MAX - 64 - b) return SIZE_MAX;  // no arena then
            total += (b + 63) / 64 * 64;
        }
        return total;
    }

    const gguf::File& file_;
    const ModelConfig& c_;
    mutable ZeroedArena arena_;  // the repacked copies, in load order
};

LayerWeights load_layer(const TensorFinder& f, const ModelConfig& c, std::int64_t il) {
    const LayerTensors& need = c.arch->layer;
    const std::string p = "blk." + std::to_string(il) + ".";
    const std::int64_t n_embd = c.n_embd, n_q = c.n_embd_q(), n_kv = c.n_embd_kv();
    LayerWeights l;
    l.attn_norm = f.vector(p + "attn_norm.weight", n_embd);
    if (need.qkv != Need::absent && f.find(p + "attn_qkv.weight")) {
        l.wqkv = f.matrix(p + "attn_qkv.weight", n_embd, n_q + 2 * n_kv);
    } else {
        f.group(Need::required, {p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"});
        l.wq = f.matrix(p + "attn_q.weight", n_embd, n_q);
        l.wk = f.matrix(p + "attn_k.weight", n_embd, n_kv);
        l.wv = f.matrix(p + "attn_v.weight", n_embd, n_kv);
        if (f.group(need.qkv_bias, {p + "attn_q.bias", p + "attn_k.bias", p + "attn_v.bias"})) {
            l.bq = f.vector(p + "attn_q.bias", n_q);
            l.bk = f.vector(p + "attn_k.bias", n_kv);
            l.bv = f.vector(p + "attn_v.bias", n_kv);
        }
    }
    if (f.group(need.qk_norm, {p + "attn_q_norm.weight", p + "attn_k_norm.weight"})) {
        l.q_norm = f.vector(p + "attn_q_norm.weight", c.head_dim);
        l.k_norm = f.vector(p + "attn_k_norm.weight", c.head_dim);
    }
    l.wo = f.matrix(p + "attn_output.weight", n_q, n_embd);
    if (f.group(need.output_bias, {p + "attn_output.bias"})) l.bo = f.vector(p + "attn_output.bias", n_embd);
    const bool post = f.group(need.post_norms, {p + "post_attention_norm.weight", p + "post_ffw_norm.weight"});
    if (post) l.post_attn_norm = f.vector(p + "post_attention_norm.weight", n_embd);
    l.ffn_norm = f.vector(p + "ffn_norm.weight", n_embd);
    if (need.ffn_gate == Need::absent) {
        l.w_up = f.matrix(p + "ffn_up.weight", n_embd, 2 * c.n_ff);
    } else {
        l.w_gate = f.matrix(p + "ffn_gate.weight", n_embd, c.n_ff);
        l.w_up = f.matrix(p + "ffn_up.weight", n_embd, c.n_ff);
    }
    l.w_down = f.matrix(p + "ffn_down.weight", c.n_ff, n_embd);
    if (post) l.post_ffw_norm = f.vector(p + "post_ffw_norm.weight", n_embd);
    return l;
}

}  // namespace

std::span<const float> ModelWeights::rope_factors(std::int64_t n_ctx, const ModelConfig& c) const noexcept {
    if (!rope_freqs.empty()) return rope_freqs;
    if (rope_long.empty()) return {};
    return n_ctx > c.rope.n_ctx_orig ? std::span<const float>(rope_long) : std::span<const float>(rope_short);
}

ModelWeights ModelWeights::from_gguf(const gguf::File& file, const ModelConfig& c,
                                     const std::function<void(float)>& progress) {
    TensorFinder f(file, c);
    ModelWeights w;
    const gguf::TensorInfo* embd = f.find("token_embd.weight");
    if (!embd) fail(file.name() + ": tensor 'token_embd.weight' is missing");
    if (embd->ne[0] != c.n_embd || embd->ne[2] != 1 || embd->ne[3] != 1) f.check_shape(*embd, c.n_embd, embd->ne[1]);
    if (c.n_vocab != 0 && embd->ne[1] != c.n_vocab) {
        fail(file.name() + ": tensor 'token_embd.weight' has " + std::to_string(embd->ne[1]) +
             " rows but the vocabulary has " + std::to_string(c.n_vocab) + " tokens");
    }
    const std::int64_t n_vocab = embd->ne[1];
    w.token_embd = embd;
    // Embedding rows are dequantized one token at a time; check the type is readable now.
    {
        std::vector<float> probe(static_cast<std::size_t>(c.n_embd));
        kernels::dequantize_row(*embd, 0, probe.data());
    }

    // Each layer has tensors of its own: a block count past the file's tensors is not a model, and
    // would size the layers from one metadata word (a 277 KB file with block_count 2^24 held
    // 1.4 GB of empty layers before its first missing tensor).
    const std::size_t n_tensors = file.tensors().size();
    if (static_cast<std::uint64_t>(c.n_layer) > n_tensors) {
        fail(file.name() + ": metadata key '" + c.architecture + ".block_count' is " + std::to_string(c.n_layer) +
             ", more layers than the file has tensors (" + std::to_string(n_tensors) + ")");
    }
    w.layers.resize(static_cast<std::size_t>(c.n_layer));
    for (std::int64_t il = 0; il < c.n_layer; ++il) {
        w.layers[static_cast<std::size_t>(il)] = load_layer(f, c, il);
        if (progress) progress(static_cast<float>(il + 1) / static_cast<float>(c.n_layer + 1));
    }
    w.output_norm = f.vector("output_norm.weight", c.n_embd);
    if (f.group(c.arch->tensors.output, {"output.weight"})) {
        w.output = f.matrix("output.weight", c.n_embd, n_vocab);
    } else {
        w.output = f.shared_matrix(*embd);  // tied embeddings
        w.tied_output = true;
    }
    const std::int64_t n_pairs = c.n_rot() / 2;
    if (f.group(c.arch->tensors.rope_freqs, {"rope_freqs.weight"})) {
        w.rope_freqs = f.vector("rope_freqs.weight", n_pairs);
    }
    if (f.group(c.arch->tensors.rope_factors, {"rope_factors_long.weight", "rope_factors_short.weight"})) {
        w.rope_long = f.vector("rope_factors_long.weight", n_pairs);
        w.rope_short = f.vector("rope_factors_short.weight", n_pairs);
    }
    const std::pair<const char*, const std::vector<float>*> factors[] = {
        {"rope_freqs.weight", &w.rope_freqs},
        {"rope_factors_long.weight", &w.rope_long},
        {"rope_factors_short.weight", &w.rope_short}};
    for (const auto& [name, values] : factors) {
        for (const float v : *values) {
            if (!(v > 0.0f) || !std::isfinite(v)) {
                fail(file.name() + ": tensor '" + name + "' holds " + std::to_string(v) +
                     "; RoPE frequency factors must be finite and > 0");
            }
        }
    }
    f.finish();
    if (progress) progress(1.0f);
    return w;
}

std::vector<const kernels::WeightMatrix*> ModelWeights::matrices() const {
    std::vector<const kernels::WeightMatrix*> m;
    for (const auto& l : layers) {
        for (const auto* x : {&l.wq, &l.wk, &l.wv, &l.wqkv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
            if (x->n_rows() > 0) m.push_back(x);
        }
    }
    m.push_back(&output);
    return m;
}

}  // namespace ember::model

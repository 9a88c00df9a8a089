#include "model/llama_weights.hpp"

#include <string>

#include "runtime/fail.hpp"

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
    explicit TensorFinder(const gguf::File& file) : file_(file) {}

    const gguf::TensorInfo& get(const std::string& name, std::int64_t ne0, std::int64_t ne1) const {
        const gguf::TensorInfo* t = file_.find_tensor(name);
        if (!t) fail(file_.name() + ": tensor '" + name + "' is missing");
        check_shape(*t, ne0, ne1);
        return *t;
    }

    const gguf::TensorInfo* find(const std::string& name) const { return file_.find_tensor(name); }

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

    kernels::WeightMatrix matrix(const std::string& name, std::int64_t n_cols,
                                 std::int64_t n_rows) const {
        return kernels::WeightMatrix::prepare(get(name, n_cols, n_rows));
    }

private:
    const gguf::File& file_;
};

}  // namespace

LlamaWeights LlamaWeights::from_gguf(const gguf::File& file, const LlamaConfig& c,
                                     const std::function<void(float)>& progress) {
    TensorFinder f(file);
    LlamaWeights w;
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

    w.layers.resize(static_cast<std::size_t>(c.n_layer));
    for (std::int64_t i = 0; i < c.n_layer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        auto& l = w.layers[static_cast<std::size_t>(i)];
        l.attn_norm = f.vector(p + "attn_norm.weight", c.n_embd);
        l.wq = f.matrix(p + "attn_q.weight", c.n_embd, c.n_embd_q());
        l.wk = f.matrix(p + "attn_k.weight", c.n_embd, c.n_embd_kv());
        l.wv = f.matrix(p + "attn_v.weight", c.n_embd, c.n_embd_kv());
        l.wo = f.matrix(p + "attn_output.weight", c.n_embd_q(), c.n_embd);
        l.ffn_norm = f.vector(p + "ffn_norm.weight", c.n_embd);
        l.w_gate = f.matrix(p + "ffn_gate.weight", c.n_embd, c.n_ff);
        l.w_up = f.matrix(p + "ffn_up.weight", c.n_embd, c.n_ff);
        l.w_down = f.matrix(p + "ffn_down.weight", c.n_ff, c.n_embd);
        if (progress) progress(static_cast<float>(i + 1) / static_cast<float>(c.n_layer + 1));
    }
    w.output_norm = f.vector("output_norm.weight", c.n_embd);
    if (f.find("output.weight")) {
        w.output = f.matrix("output.weight", c.n_embd, n_vocab);
    } else {
        w.output = kernels::WeightMatrix::prepare(*embd);  // tied embeddings
        w.tied_output = true;
    }
    if (f.find("rope_freqs.weight")) {
        w.rope_freq_factors = f.vector("rope_freqs.weight", c.n_rot / 2);
    }
    if (progress) progress(1.0f);
    return w;
}

std::vector<const kernels::WeightMatrix*> LlamaWeights::matrices() const {
    std::vector<const kernels::WeightMatrix*> m;
    for (const auto& l : layers) {
        for (const auto* x : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) m.push_back(x);
    }
    m.push_back(&output);
    return m;
}

}  // namespace ember::model

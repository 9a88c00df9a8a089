#include "model/decoder.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "kernels/dispatch.hpp"
#include "kernels/float_ops.hpp"
#include "kernels/matmul.hpp"
#include "model/kv_type.hpp"
#include "model/rope.hpp"
#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"

namespace ember::model {
namespace {

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(n); }

// y[i][j] += b[j] for n rows of b.size() values, `stride` apart.
void add_bias(float* y, const std::vector<float>& b, std::int64_t n, std::int64_t stride) {
    if (b.empty()) return;
    const auto w = static_cast<std::int64_t>(b.size());
    for (std::int64_t i = 0; i < n; ++i) {
        for (std::int64_t j = 0; j < w; ++j) y[i * stride + j] += b[sz(j)];
    }
}

// The gated activation: out = act(gate) * up.
void gated(ember::model::Activation act, float* out, const float* gate, const float* up, std::int64_t n) {
    if (act == ember::model::Activation::gelu_tanh) {
        kernels::geglu_f16(out, gate, up, n);  // ggml's fp16 GELU: perplexity 20x closer to llama.cpp
    } else {
        kernels::swiglu(out, gate, up, n);
    }
}

// RMSNorm of n rows of `width` values in place (no-op without weights).
void norm_rows(float* x, const std::vector<float>& weight, std::int64_t n, std::int64_t width, float eps) {
    if (weight.empty()) return;
    for (std::int64_t i = 0; i < n; ++i) kernels::rmsnorm(x + i * width, x + i * width, weight.data(), width, eps);
}

// Threads worth using for a product of `n` activation rows with these weights (tiny models and
// single small matrices run on the calling thread alone).
int matmul_threads(std::initializer_list<const kernels::WeightMatrix*> ws, std::int64_t n, int n_threads) {
    std::int64_t bytes = 0;
    for (const auto* w : ws) bytes += static_cast<std::int64_t>(w->bytes());
    return threads_for(bytes * n, n_threads);
}

}  // namespace

ForwardScratch::ForwardScratch(const ModelConfig& c, const ModelWeights& w, std::int64_t n_batch,
                               std::int64_t n_ctx, std::int64_t n_logit_rows, int n_threads,
                               std::int64_t n_hidden_rows)
    : n_batch_(n_batch), n_ctx_(n_ctx), n_logit_rows_(n_logit_rows),
      n_vocab_(w.output.n_rows()), n_hidden_rows_(n_hidden_rows), n_embd_(c.n_embd),
      n_threads_(std::max(n_threads, 1)) {
    const std::int64_t wide = std::max(c.n_embd, c.n_embd_q());
    bool fused_qkv = false, fused_gate_up = false;
    for (const auto& l : w.layers) {
        fused_qkv = fused_qkv || l.fused_qkv();
        fused_gate_up = fused_gate_up || l.fused_gate_up();
    }
    x_.resize(sz(n_batch * c.n_embd));
    xn_.resize(sz(n_batch * wide));
    q_.resize(sz(n_batch * wide));
    k_.resize(sz(n_batch * c.n_embd_kv()));
    v_.resize(sz(n_batch * c.n_embd_kv()));
    if (fused_qkv) qkv_.resize(sz(n_batch * (c.n_embd_q() + 2 * c.n_embd_kv())));
    gate_.resize(sz(n_batch * c.n_ff * (fused_gate_up ? 2 : 1)));
    up_.resize(sz(n_batch * c.n_ff));
    rope_.resize(sz(n_batch * 2 * c.n_rot()));
    // Blocks of about 32 queries: each key and value read once for all of them. Their scores
    // take block_rows times the memory of one row's: at most 4 MiB per thread unless one row
    // alone needs more.
    const std::int64_t group = c.n_head / std::max<std::int64_t>(c.n_head_kv, 1);
    block_rows_ = std::clamp<std::int64_t>(std::min(32 / group, (std::int64_t{1} << 20) / std::max<std::int64_t>(group * n_ctx, 1)),
                                           1, std::max<std::int64_t>(n_batch, 1));
    scores_.resize(sz(n_threads_ * kernels::attend_scratch_floats(block_rows_ * group, n_ctx, c.head_dim)));
    n_pos_.resize(sz(n_batch));
    start_.resize(sz(n_batch));
    blocks_.resize(sz(n_batch + 1));
    block_keys_.resize(sz(2 * n_batch));
    hidden_.resize(sz(n_hidden_rows * c.n_embd));
    max_runs_ = n_ctx + 1;  // one run per page: at most one per position
    runs_.resize(sz(n_threads_ * max_runs_));
    std::size_t mm = 0;
    for (const auto* m : w.matrices()) {
        if (m != &w.output) mm = std::max(mm, kernels::matmul_scratch_bytes(*m, n_batch));
    }
    for (const LayerWeights& l : w.layers) {  // q/k/v or gate/up of several types as one product
        const kernels::WeightMatrix* qkv[] = {&l.wq, &l.wk, &l.wv};
        const kernels::WeightMatrix* gate_up[] = {&l.w_gate, &l.w_up};
        mm = std::max({mm, kernels::matmul_many_scratch_bytes(qkv, n_batch), kernels::matmul_many_scratch_bytes(gate_up, n_batch)});
    }
    matmul_.resize(mm);
    n_logit_rows_ = 0;
    reserve_logit_rows(c, w, n_logit_rows);
}

void ForwardScratch::reserve_logit_rows(const ModelConfig& c, const ModelWeights& w, std::int64_t n) {
    EMBER_ASSERT(n <= n_batch_);
    if (n <= n_logit_rows_) return;
    n_logit_rows_ = n;
    out_rows_.resize(sz(n * c.n_embd));
    logits_.resize(sz(n * n_vocab_));
    matmul_.resize(std::max(matmul_.size(), kernels::matmul_scratch_bytes(w.output, n)));
}

std::int64_t ForwardScratch::estimate_bytes(const ModelConfig& c, std::int64_t n_vocab, std::int64_t n_batch,
                                            std::int64_t n_ctx, std::int64_t n_logit_rows, int n_threads,
                                            std::int64_t n_hidden_rows) {
    // The constructor's buffers, in floats, with fused q/k/v and gate/up counted (either may be).
    const std::int64_t wide = std::max(c.n_embd, c.n_embd_q());
    const std::int64_t group = c.n_head / std::max<std::int64_t>(c.n_head_kv, 1);
    const std::int64_t per_row = c.n_embd + 2 * wide + 2 * c.n_embd_kv() + (c.n_embd_q() + 2 * c.n_embd_kv()) +
                                 3 * c.n_ff + 2 * c.n_rot();
    const std::int64_t floats = n_batch * per_row + std::max(n_threads, 1) * group * n_ctx +
                                n_logit_rows * (c.n_embd + n_vocab) + n_hidden_rows * c.n_embd;
    // Kernel scratch (kernels::matmul_scratch_bytes): at most a float row of activations plus
    // 1.25 bytes per value of packed int8 data, and alignment, per row; q/k/v of three types as
    // one product (matmul_many_scratch_bytes) prepare three rows of about 2.5 bytes a value.
    const std::int64_t cols = std::max({c.n_embd, c.n_embd_q(), c.n_ff});
    const std::int64_t rows = std::max(n_batch, n_logit_rows);
    return floats * static_cast<std::int64_t>(sizeof(float)) + rows * (8 * cols + 384) + 256;
}

bool Decoder::run(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
                  ForwardScratch& s, int n_threads, const std::function<bool()>& cancel) const {
    const auto n = static_cast<std::int64_t>(rows.size());
    EMBER_ASSERT(n > 0 && n <= s.n_batch_);
    n_threads = std::clamp(n_threads, 1, s.n_threads_);
    const std::int64_t n_embd = c_.n_embd;
    std::int64_t n_out = 0, n_hidden = 0;
    for (const auto& r : rows) {
        n_out += r.logits ? 1 : 0;
        n_hidden += r.hidden ? 1 : 0;
    }
    EMBER_ASSERT(n_out <= s.n_logit_rows_ && n_hidden <= s.n_hidden_rows_);

    embed(rows, caches, s);
    for (std::int64_t il = 0; il < c_.n_layer; ++il) {
        if (cancel && cancel()) return false;
        const LayerWeights& l = w_.layers[sz(il)];
        attention_block(l, il, rows, caches, s, n_threads);
        ffn_block(l, n, s, n_threads);
    }

    std::int64_t o = 0, h = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        if (rows[sz(i)].hidden) {
            kernels::rmsnorm(&s.hidden_[sz(h++ * n_embd)], &s.x_[sz(i * n_embd)],
                             w_.output_norm.data(), n_embd, c_.rms_eps);
        }
        if (!rows[sz(i)].logits) continue;
        kernels::rmsnorm(&s.out_rows_[sz(o * n_embd)], &s.x_[sz(i * n_embd)],
                         w_.output_norm.data(), n_embd, c_.rms_eps);
        ++o;
    }
    if (n_out == 0) return true;
    kernels::matmul(w_.output, s.out_rows_.data(), n_out, s.logits_.data(), w_.output.n_rows(),
                    s.matmul_, matmul_threads({&w_.output}, n_out, n_threads));
    if (c_.final_softcap > 0.0f) {
        // As llama.cpp: scale by 1/cap, tanh, scale by cap.
        const float inv = 1.0f / c_.final_softcap;
        for (std::int64_t i = 0; i < n_out * s.n_vocab_; ++i) {
            s.logits_[sz(i)] = std::tanh(s.logits_[sz(i)] * inv) * c_.final_softcap;
        }
    }
    return true;
}

void Decoder::embed(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
                    ForwardScratch& s) const {
    const auto n = static_cast<std::int64_t>(rows.size());
    const std::int64_t n_rot = c_.n_rot();
    for (std::int64_t i = 0; i < n; ++i) {
        const BatchRow& r = rows[sz(i)];
        float* x = &s.x_[sz(i * c_.n_embd)];
        kernels::dequantize_row(*w_.token_embd, r.token, x);
        if (c_.embed_scale != 1.0f) {
            for (std::int64_t j = 0; j < c_.n_embd; ++j) x[j] *= c_.embed_scale;
        }
        const KvCache& cache = *caches[sz(r.seq)];
        const auto factors = w_.rope_factors(cache.n_ctx(), c_);
        float* cs = &s.rope_[sz(i * 2 * n_rot)];
        rope_angles(cs, r.pos, c_.rope, factors);
        if (c_.n_swa > 0) rope_angles(cs + n_rot, r.pos, c_.rope_local, factors);
    }
    // Make each sequence's positions writable (pages taken, shared ones copied, sliding layers'
    // old pages let go) before any is written. Callers whose pool can run out reserve first
    // (the Engine), so this never fails.
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int32_t seq = rows[sz(i)].seq;
        bool seen = false;
        for (std::int64_t j = 0; j < i && !seen; ++j) seen = rows[sz(j)].seq == seq;
        if (seen) continue;
        std::int32_t first = rows[sz(i)].pos, last = first;
        for (std::int64_t j = i; j < n; ++j) {
            if (rows[sz(j)].seq != seq) continue;
            first = std::min(first, rows[sz(j)].pos);
            last = std::max(last, rows[sz(j)].pos);
        }
        const bool ok = caches[sz(seq)]->reserve(first, last);
        EMBER_ASSERT(ok);
    }
}

void Decoder::attention_block(const LayerWeights& l, std::int64_t il, std::span<const BatchRow> rows,
                              std::span<KvCache* const> caches, ForwardScratch& s, int n_threads) const {
    const auto n = static_cast<std::int64_t>(rows.size());
    const std::int64_t n_embd = c_.n_embd, n_q = c_.n_embd_q(), n_kv = c_.n_embd_kv();
    const std::int64_t hd = c_.head_dim, n_rot = c_.n_rot();
    for (std::int64_t i = 0; i < n; ++i) {
        kernels::rmsnorm(&s.xn_[sz(i * n_embd)], &s.x_[sz(i * n_embd)], l.attn_norm.data(),
                         n_embd, c_.rms_eps);
    }
    if (l.fused_qkv()) {
        const std::int64_t w = n_q + 2 * n_kv;
        kernels::matmul(l.wqkv, s.xn_.data(), n, s.qkv_.data(), w, s.matmul_,
                        matmul_threads({&l.wqkv}, n, n_threads));
        for (std::int64_t i = 0; i < n; ++i) {
            const float* src = &s.qkv_[sz(i * w)];
            std::copy_n(src, n_q, &s.q_[sz(i * n_q)]);
            std::copy_n(src + n_q, n_kv, &s.k_[sz(i * n_kv)]);
            std::copy_n(src + n_q + n_kv, n_kv, &s.v_[sz(i * n_kv)]);
        }
    } else {
        const kernels::MatmulJob qkv[] = {{&l.wq, s.q_.data(), n_q},
                                           {&l.wk, s.k_.data(), n_kv},
                                           {&l.wv, s.v_.data(), n_kv}};
        kernels::matmul_many(qkv, s.xn_.data(), n, s.matmul_, matmul_threads({&l.wq, &l.wk, &l.wv}, n, n_threads));
    }
    add_bias(s.q_.data(), l.bq, n, n_q);
    add_bias(s.k_.data(), l.bk, n, n_kv);
    add_bias(s.v_.data(), l.bv, n, n_kv);
    norm_rows(s.q_.data(), l.q_norm, n * c_.n_head, hd, c_.rms_eps);
    norm_rows(s.k_.data(), l.k_norm, n * c_.n_head_kv, hd, c_.rms_eps);

    const bool local = c_.is_local(il);
    const bool prescale = c_.attn_scale_at == ScaleAt::queries;
    for (std::int64_t i = 0; i < n; ++i) {
        const BatchRow& r = rows[sz(i)];
        const float* cs = &s.rope_[sz((i * 2 + (local ? 1 : 0)) * n_rot)];
        float* q = &s.q_[sz(i * n_q)];
        rope_apply(q, c_.n_head, hd, n_rot, c_.rope.style, cs);
        rope_apply(&s.k_[sz(i * n_kv)], c_.n_head_kv, hd, n_rot, c_.rope.style, cs);
        if (prescale) {
            for (std::int64_t j = 0; j < n_q; ++j) q[j] *= c_.attn_scale;
        }
        KvCache& cache = *caches[sz(r.seq)];
        cache.store(il, r.pos, &s.k_[sz(i * n_kv)], &s.v_[sz(i * n_kv)]);
    }
    attend(rows, caches, il, s, n_threads);  // writes xn_ [n][n_q]
    kernels::matmul(l.wo, s.xn_.data(), n, s.q_.data(), n_embd, s.matmul_,  // q_ reused
                    matmul_threads({&l.wo}, n, n_threads));
    add_bias(s.q_.data(), l.bo, n, n_embd);
    norm_rows(s.q_.data(), l.post_attn_norm, n, n_embd, c_.rms_eps);
    kernels::add(s.x_.data(), s.q_.data(), n * n_embd);
}

void Decoder::attend(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
                     std::int64_t layer, ForwardScratch& s, int n_threads) const {
    const std::int64_t n = static_cast<std::int64_t>(rows.size());
    const std::int64_t hd = c_.head_dim, n_q = c_.n_embd_q();
    const std::int64_t group = c_.n_head / c_.n_head_kv;
    const float scale = c_.attn_scale_at == ScaleAt::queries ? 1.0f : c_.attn_scale;
    // Soft-capped scores (gemma2) take the scalar kernel on every ISA, as llama.cpp computes them.
    const kernels::FloatKernels& fk = c_.attn_softcap > 0.0f ? kernels::float_kernels(kernels::Isa::scalar)
                                                             : kernels::float_kernels();
    // Blocks of consecutive rows of one sequence (a prefill chunk: up to block_rows of them) over
    // the positions any of them reads; row i reads its own [first, pos] of them (sliding windows
    // start later). One task per (block, key/value head) runs the `group` query heads of each row
    // over the runs of consecutive cache rows (one per page).
    // Threads by the keys and values read times the query heads that read each of them (decode at a
    // short depth is not worth a second thread; by bytes alone TinyLlama's decode ran its 8-head
    // groups on one thread until depth 128, 16 us a layer at depth 64 with the other thread idle).
    std::int64_t kv_bytes = 0, n_blocks = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const BatchRow& r = rows[sz(i)];
        const KvCache& cache = *caches[sz(r.seq)];
        const std::int64_t first = cache.attend_first(layer, r.pos);
        s.n_pos_[sz(i)] = r.pos - first + 1;
        s.start_[sz(i)] = first;  // made relative to the block's first position below
        kv_bytes += 2 * static_cast<std::int64_t>(cache.pool().row_bytes()) * s.n_pos_[sz(i)];
        if (i == 0 || r.seq != rows[sz(i - 1)].seq || i - s.blocks_[sz(n_blocks - 1)] == s.block_rows_) {
            s.blocks_[sz(n_blocks++)] = i;
        }
    }
    s.blocks_[sz(n_blocks)] = n;
    for (std::int64_t b = 0; b < n_blocks; ++b) {  // a block reads the union of its rows' (consecutive) positions
        std::int64_t first = s.start_[sz(s.blocks_[sz(b)])], last = rows[sz(s.blocks_[sz(b)])].pos;
        for (std::int64_t i = s.blocks_[sz(b)]; i < s.blocks_[sz(b + 1)]; ++i) {
            first = std::min(first, s.start_[sz(i)]);
            last = std::max<std::int64_t>(last, rows[sz(i)].pos);
        }
        for (std::int64_t i = s.blocks_[sz(b)]; i < s.blocks_[sz(b + 1)]; ++i) s.start_[sz(i)] -= first;
        EMBER_ASSERT(last - first < s.n_ctx_);  // the scores' scratch holds n_ctx keys
        s.block_keys_[sz(2 * b)] = first;
        s.block_keys_[sz(2 * b + 1)] = last;
    }
    const std::int64_t scratch_floats = kernels::attend_scratch_floats(s.block_rows_ * group, s.n_ctx_, hd);
    parallel_for(n_blocks * c_.n_head_kv, threads_for(kv_bytes * group, n_threads), 1, [&](std::int64_t begin, std::int64_t end, int worker) {
        float* scratch = &s.scores_[sz(worker * scratch_floats)];
        kernels::KvRun* runs = &s.runs_[sz(worker * s.max_runs_)];
        for (std::int64_t task = begin; task < end; ++task) {
            const std::int64_t b = task / c_.n_head_kv, kvh = task % c_.n_head_kv;
            const std::int64_t i0 = s.blocks_[sz(b)], n_rows = s.blocks_[sz(b + 1)] - i0;
            const std::int64_t first = s.block_keys_[sz(2 * b)], last = s.block_keys_[sz(2 * b + 1)];
            const KvCache& cache = *caches[sz(rows[sz(i0)].seq)];
            const KvPool& pool = cache.pool();
            std::int64_t n_runs = 0;
            cache.for_each_run(layer, first, last, [&](std::int32_t page, std::int64_t row, std::int64_t rows_n) {
                runs[n_runs++] = {pool.k_grid(page, kvh), pool.v_slabs(page, kvh), rows_n, row, pool.block()};
            });
            EMBER_ASSERT(n_runs <= s.max_runs_);
            const std::int64_t h0 = kvh * group;
            const kernels::AttendQueries queries{&s.q_[sz(i0 * n_q + h0 * hd)], &s.xn_[sz(i0 * n_q + h0 * hd)], n_rows,
                                                 group, n_q, &s.n_pos_[sz(i0)], &s.start_[sz(i0)]};
            fk.attend(pool.type())(queries, hd, runs, n_runs, scale, c_.attn_softcap, scratch);
        }
    });
}

void Decoder::ffn_block(const LayerWeights& l, std::int64_t n, ForwardScratch& s, int n_threads) const {
    const std::int64_t n_embd = c_.n_embd, n_ff = c_.n_ff;
    for (std::int64_t i = 0; i < n; ++i) {
        kernels::rmsnorm(&s.xn_[sz(i * n_embd)], &s.x_[sz(i * n_embd)], l.ffn_norm.data(),
                         n_embd, c_.rms_eps);
    }
    float* act = nullptr;  // [n][n_ff] input of the down projection
    if (l.fused_gate_up()) {
        // One projection: each row holds the gate values, then the up values.
        kernels::matmul(l.w_up, s.xn_.data(), n, s.gate_.data(), 2 * n_ff, s.matmul_,
                        matmul_threads({&l.w_up}, n, n_threads));
        for (std::int64_t i = 0; i < n; ++i) {
            const float* g = &s.gate_[sz(i * 2 * n_ff)];
            gated(c_.arch->activation, &s.up_[sz(i * n_ff)], g, g + n_ff, n_ff);
        }
        act = s.up_.data();
    } else {
        const kernels::MatmulJob gate_up[] = {{&l.w_gate, s.gate_.data(), n_ff},
                                               {&l.w_up, s.up_.data(), n_ff}};
        kernels::matmul_many(gate_up, s.xn_.data(), n, s.matmul_, matmul_threads({&l.w_gate, &l.w_up}, n, n_threads));
        gated(c_.arch->activation, s.gate_.data(), s.gate_.data(), s.up_.data(), n * n_ff);
        act = s.gate_.data();
    }
    kernels::matmul(l.w_down, act, n, s.xn_.data(), n_embd, s.matmul_, matmul_threads({&l.w_down}, n, n_threads));
    norm_rows(s.xn_.data(), l.post_ffw_norm, n, n_embd, c_.rms_eps);
    kernels::add(s.x_.data(), s.xn_.data(), n * n_embd);
}

}  // namespace ember::model

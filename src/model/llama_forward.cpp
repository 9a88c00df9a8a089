#include "model/llama_forward.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/dispatch.hpp"
#include "kernels/float_ops.hpp"
#include "kernels/matmul.hpp"
#include "model/rope.hpp"
#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"

namespace ember::model {
namespace {

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(n); }

}  // namespace

ForwardScratch::ForwardScratch(const LlamaConfig& c, const LlamaWeights& w, std::int64_t n_batch,
                               std::int64_t n_ctx, std::int64_t n_logit_rows, int n_threads)
    : n_batch_(n_batch), n_ctx_(n_ctx), n_logit_rows_(n_logit_rows),
      n_vocab_(w.output.n_rows()), n_threads_(std::max(n_threads, 1)) {
    x_.resize(sz(n_batch * c.n_embd));
    xn_.resize(sz(n_batch * std::max(c.n_embd, c.n_embd_q())));
    q_.resize(sz(n_batch * std::max(c.n_embd, c.n_embd_q())));
    k_.resize(sz(n_batch * c.n_embd_kv()));
    v_.resize(sz(n_batch * c.n_embd_kv()));
    gate_.resize(sz(n_batch * c.n_ff));
    up_.resize(sz(n_batch * c.n_ff));
    rope_.resize(sz(n_batch * c.n_rot));
    scores_.resize(sz(n_threads_ * (c.n_head / std::max<std::int64_t>(c.n_head_kv, 1)) * n_ctx));
    out_rows_.resize(sz(n_logit_rows * c.n_embd));
    logits_.resize(sz(n_logit_rows * n_vocab_));
    std::size_t mm = 0;
    for (const auto* m : w.matrices()) {
        const std::int64_t rows = (m == &w.output) ? n_logit_rows : n_batch;
        mm = std::max(mm, kernels::matmul_scratch_bytes(*m, rows));
    }
    matmul_.resize(mm);
}

bool LlamaForward::run(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
                       ForwardScratch& s, int n_threads, const std::function<bool()>& cancel) const {
    const auto n = static_cast<std::int64_t>(rows.size());
    EMBER_ASSERT(n > 0 && n <= s.n_batch_);
    n_threads = std::clamp(n_threads, 1, s.n_threads_);
    const std::int64_t n_embd = c_.n_embd, n_q = c_.n_embd_q(), n_kv = c_.n_embd_kv();
    std::int64_t n_out = 0;
    for (const auto& r : rows) n_out += r.logits ? 1 : 0;
    EMBER_ASSERT(n_out <= s.n_logit_rows_);

    for (std::int64_t i = 0; i < n; ++i) {
        kernels::dequantize_row(*w_.token_embd, rows[sz(i)].token, &s.x_[sz(i * n_embd)]);
        rope_angles(&s.rope_[sz(i * c_.n_rot)], rows[sz(i)].pos, c_.n_rot, c_.rope_freq_base,
                      w_.rope_freq_factors);
    }

    auto mm = [&](const kernels::WeightMatrix& m, const float* x, std::int64_t rows_n, float* y) {
        kernels::matmul(m, x, rows_n, y, m.n_rows(), s.matmul_, n_threads);
    };

    for (std::int64_t il = 0; il < c_.n_layer; ++il) {
        if (cancel && cancel()) return false;
        const LayerWeights& l = w_.layers[sz(il)];

        for (std::int64_t i = 0; i < n; ++i) {
            kernels::rmsnorm(&s.xn_[sz(i * n_embd)], &s.x_[sz(i * n_embd)], l.attn_norm.data(),
                             n_embd, c_.rms_eps);
        }
        const kernels::MatmulJob qkv[] = {{&l.wq, s.q_.data(), l.wq.n_rows()},
                                           {&l.wk, s.k_.data(), l.wk.n_rows()},
                                           {&l.wv, s.v_.data(), l.wv.n_rows()}};
        kernels::matmul_many(qkv, s.xn_.data(), n, s.matmul_, n_threads);
        for (std::int64_t i = 0; i < n; ++i) {
            const BatchRow& r = rows[sz(i)];
            const float* cs = &s.rope_[sz(i * c_.n_rot)];
            rope_apply(&s.q_[sz(i * n_q)], c_.n_head, c_.head_dim, c_.n_rot, cs);
            rope_apply(&s.k_[sz(i * n_kv)], c_.n_head_kv, c_.head_dim, c_.n_rot, cs);
            KvCache& cache = *caches[sz(r.seq)];
            std::copy_n(&s.k_[sz(i * n_kv)], n_kv, cache.k(il, r.pos));
            std::copy_n(&s.v_[sz(i * n_kv)], n_kv, cache.v(il, r.pos));
        }
        attention(rows, caches, il, s, n_threads);  // writes xn_ [n][n_q]
        mm(l.wo, s.xn_.data(), n, s.q_.data());      // q_ reused as [n][n_embd] output
        for (std::int64_t i = 0; i < n * n_embd; ++i) s.x_[sz(i)] += s.q_[sz(i)];

        for (std::int64_t i = 0; i < n; ++i) {
            kernels::rmsnorm(&s.xn_[sz(i * n_embd)], &s.x_[sz(i * n_embd)], l.ffn_norm.data(),
                             n_embd, c_.rms_eps);
        }
        const kernels::MatmulJob gate_up[] = {{&l.w_gate, s.gate_.data(), l.w_gate.n_rows()},
                                               {&l.w_up, s.up_.data(), l.w_up.n_rows()}};
        kernels::matmul_many(gate_up, s.xn_.data(), n, s.matmul_, n_threads);
        kernels::swiglu(s.gate_.data(), s.gate_.data(), s.up_.data(), n * c_.n_ff);
        mm(l.w_down, s.gate_.data(), n, s.xn_.data());
        for (std::int64_t i = 0; i < n * n_embd; ++i) s.x_[sz(i)] += s.xn_[sz(i)];
    }

    std::int64_t o = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        if (!rows[sz(i)].logits) continue;
        kernels::rmsnorm(&s.out_rows_[sz(o * n_embd)], &s.x_[sz(i * n_embd)],
                         w_.output_norm.data(), n_embd, c_.rms_eps);
        ++o;
    }
    if (n_out > 0) mm(w_.output, s.out_rows_.data(), n_out, s.logits_.data());
    return true;
}

void LlamaForward::attention(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
                             std::int64_t layer, ForwardScratch& s, int n_threads) const {
    const std::int64_t n = static_cast<std::int64_t>(rows.size());
    const std::int64_t hd = c_.head_dim, n_q = c_.n_embd_q(), n_kv = c_.n_embd_kv();
    const std::int64_t group = c_.n_head / c_.n_head_kv;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const kernels::AttendFn attend = kernels::float_kernels().attend;
    // One task per (row, key/value head): the `group` query heads sharing it run together.
    parallel_for(n * c_.n_head_kv, n_threads, 1, [&](std::int64_t begin, std::int64_t end, int worker) {
        float* scores = &s.scores_[sz(worker * group * s.n_ctx_)];
        for (std::int64_t task = begin; task < end; ++task) {
            const std::int64_t i = task / c_.n_head_kv, kvh = task % c_.n_head_kv;
            const BatchRow& r = rows[sz(i)];
            const KvCache& cache = *caches[sz(r.seq)];
            const std::int64_t h0 = kvh * group;
            attend(&s.q_[sz(i * n_q + h0 * hd)], group, hd, cache.k(layer, 0) + kvh * hd,
                   cache.v(layer, 0) + kvh * hd, n_kv, r.pos + 1, scale,
                   &s.xn_[sz(i * n_q + h0 * hd)], scores);
        }
    });
}

}  // namespace ember::model

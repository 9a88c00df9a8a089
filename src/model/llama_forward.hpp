// The llama forward pass over a batch of (token, position, sequence) rows.
//
//   embed -> [rmsnorm -> q,k,v -> rope -> kv cache -> attention -> o -> +res
//             -> rmsnorm -> gate,up -> swiglu -> down -> +res] x n_layer -> rmsnorm -> logits
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "model/batch.hpp"
#include "model/kv_cache.hpp"
#include "model/llama_config.hpp"
#include "model/llama_weights.hpp"

namespace ember::model {

/// Every buffer one forward pass needs, sized once for at most `n_batch` rows, `n_ctx` cached
/// positions and `n_threads` workers, so that run() never allocates.
class ForwardScratch {
public:
    ForwardScratch() = default;
    ForwardScratch(const LlamaConfig& c, const LlamaWeights& w, std::int64_t n_batch,
                   std::int64_t n_ctx, std::int64_t n_logit_rows, int n_threads);

    std::int64_t n_batch() const noexcept { return n_batch_; }
    std::int64_t n_logit_rows() const noexcept { return n_logit_rows_; }
    /// Logits written by the last run: one row of n_vocab per batch row that asked for them.
    std::span<const float> logits(std::int64_t i) const noexcept {
        return {logits_.data() + i * n_vocab_, static_cast<std::size_t>(n_vocab_)};
    }

private:
    friend class LlamaForward;
    std::int64_t n_batch_ = 0, n_ctx_ = 0, n_logit_rows_ = 0, n_vocab_ = 0;
    int n_threads_ = 1;
    std::vector<float> x_;       // [n_batch][n_embd] residual stream
    std::vector<float> xn_;      // [n_batch][max(n_embd, n_embd_q)] normed input / attention output
    std::vector<float> q_;       // [n_batch][max(n_embd_q, n_embd)] queries, then attention projection
    std::vector<float> k_;       // [n_batch][n_embd_kv]
    std::vector<float> v_;       // [n_batch][n_embd_kv]
    std::vector<float> gate_;    // [n_batch][n_ff]
    std::vector<float> up_;      // [n_batch][n_ff]
    std::vector<float> rope_;    // [n_batch][n_rot] cos/sin pairs per row
    std::vector<float> scores_;  // [n_threads][n_head / n_head_kv][n_ctx] attention scores per worker
    std::vector<float> out_rows_;  // [n_logit_rows][n_embd] rows that want logits
    std::vector<float> logits_;  // [n_logit_rows][n_vocab]
    std::vector<std::byte> matmul_;  // kernel scratch (quantized activations)
};

class LlamaForward {
public:
    LlamaForward(const LlamaConfig& config, const LlamaWeights& weights)
        : c_(config), w_(weights) {}

    /// Runs the rows through the model, writing their keys and values into caches[row.seq]
    /// and logits for rows with `logits` set (in row order) into the scratch. Rows must fit the
    /// scratch and caches (checked by the caller). `cancel` is polled between layers; returns
    /// false if it asked to stop (the caches then hold partial, ignorable entries).
    bool run(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
             ForwardScratch& s, int n_threads, const std::function<bool()>& cancel) const;

private:
    void attention(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
                   std::int64_t layer, ForwardScratch& s, int n_threads) const;

    const LlamaConfig& c_;
    const LlamaWeights& w_;
};

}  // namespace ember::model

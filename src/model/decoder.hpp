// The decoder: one forward pass for every architecture (model/arch.hpp says which parts a model
// uses), over a batch of (token, position, sequence) rows.
//
//   embed (x sqrt(n_embd)) -> [rmsnorm -> q,k,v (fused or not, + biases) -> q/k head norms
//     -> RoPE (normal or NEOX; local layers their own base) -> kv cache -> attention (causal,
//     grouped-query, sliding window on local layers, soft-capped scores) -> o (+ bias)
//     -> post-attention norm -> +res -> rmsnorm -> gate,up (fused or not) -> SwiGLU or GeGLU
//     -> down -> post-ffw norm -> +res] x n_layer -> rmsnorm -> logits (soft-capped)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kernels/attention.hpp"
#include "model/batch.hpp"
#include "model/config.hpp"
#include "model/kv_cache.hpp"
#include "model/weights.hpp"
#include "runtime/zeroed_memory.hpp"

namespace ember::model {

/// Every buffer one forward pass needs, sized once for at most `n_batch` rows, `n_ctx` cached
/// positions and `n_threads` workers, so that run() never allocates.
class ForwardScratch {
public:
    ForwardScratch() = default;
    /// `n_hidden_rows`: most rows of one run that ask for their hidden state (BatchRow::hidden).
    ForwardScratch(const ModelConfig& c, const ModelWeights& w, std::int64_t n_batch,
                   std::int64_t n_ctx, std::int64_t n_logit_rows, int n_threads,
                   std::int64_t n_hidden_rows = 0);

    /// An upper bound of the bytes such a scratch allocates, from the configuration alone
    /// (fused or separate projections, kernel scratch bounded for any weight type); for memory
    /// estimates before loading.
    static std::int64_t estimate_bytes(const ModelConfig& c, std::int64_t n_vocab, std::int64_t n_batch,
                                       std::int64_t n_ctx, std::int64_t n_logit_rows, int n_threads,
                                       std::int64_t n_hidden_rows = 0);

    std::int64_t n_batch() const noexcept { return n_batch_; }
    std::int64_t n_logit_rows() const noexcept { return n_logit_rows_; }
    /// Makes room for logits of up to `n` rows (at most n_batch); allocates only when growing.
    void reserve_logit_rows(const ModelConfig& c, const ModelWeights& w, std::int64_t n);
    /// Logits written by the last run: one row of n_vocab per batch row that asked for them.
    std::span<const float> logits(std::int64_t i) const noexcept {
        return {logits_.data() + i * n_vocab_, static_cast<std::size_t>(n_vocab_)};
    }
    /// Final hidden states written by the last run: n_embd floats per row that asked for them.
    std::span<const float> hidden(std::int64_t i) const noexcept {
        return {hidden_.data() + i * n_embd_, static_cast<std::size_t>(n_embd_)};
    }

private:
    friend class Decoder;
    std::int64_t n_batch_ = 0, n_ctx_ = 0, n_logit_rows_ = 0, n_vocab_ = 0, n_hidden_rows_ = 0, n_embd_ = 0;
    int n_threads_ = 1;
    ZeroedVector<float> x_;       // [n_batch][n_embd] residual stream
    ZeroedVector<float> xn_;      // [n_batch][max(n_embd, n_embd_q)] normed input / attention output
    ZeroedVector<float> q_;       // [n_batch][max(n_embd_q, n_embd)] queries, then projections
    ZeroedVector<float> k_;       // [n_batch][n_embd_kv]
    ZeroedVector<float> v_;       // [n_batch][n_embd_kv]
    ZeroedVector<float> qkv_;     // [n_batch][n_embd_q + 2 n_embd_kv] fused projection (or empty)
    ZeroedVector<float> gate_;    // [n_batch][n_ff] (2 n_ff when gate and up are fused)
    ZeroedVector<float> up_;      // [n_batch][n_ff]
    std::vector<float> rope_;    // [n_batch][2][n_rot] cos/sin per row: global, local layers
    std::int64_t block_rows_ = 1;  // rows of one sequence attended together (kernels/attention.hpp)
    ZeroedVector<float> scores_;  // [n_threads][attend_scratch_floats(block_rows * group, n_ctx, head_dim)]
    std::vector<std::int64_t> n_pos_;  // [n_batch] keys each row reads in the current layer
    std::vector<std::int64_t> start_;  // [n_batch] its first key within its block's runs
    std::vector<std::int64_t> blocks_;  // [n_batch] first row of each block in the current layer
    std::vector<std::int64_t> block_keys_;  // [n_batch][2] first and last position each block reads
    std::int64_t max_runs_ = 0;
    std::vector<kernels::KvRun> runs_;  // [n_threads][max_runs] the KV runs a worker attends to
    ZeroedVector<float> out_rows_;  // [n_logit_rows][n_embd] rows that want logits
    ZeroedVector<float> logits_;  // [n_logit_rows][n_vocab]
    ZeroedVector<float> hidden_;  // [n_hidden_rows][n_embd] rows that want their hidden state
    ZeroedVector<std::byte> matmul_;  // kernel scratch (quantized activations)
};

class Decoder {
public:
    Decoder(const ModelConfig& config, const ModelWeights& weights) : c_(config), w_(weights) {}

    /// Runs the rows through the model, writing their keys and values into caches[row.seq],
    /// logits for rows with `logits` set and final hidden states for rows with `hidden` set
    /// (each in row order) into the scratch. Rows must fit the scratch; positions are reserved
    /// here (KvCache::reserve), so a caller whose pool can run out reserves them first and
    /// handles a full pool; the rows of one sequence hold consecutive positions. `cancel` is
    /// polled between layers; returns false if it asked to stop (the caches then hold partial,
    /// ignorable entries).
    bool run(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
             ForwardScratch& s, int n_threads, const std::function<bool()>& cancel) const;

private:
    void embed(std::span<const BatchRow> rows, std::span<KvCache* const> caches, ForwardScratch& s) const;
    void attention_block(const LayerWeights& l, std::int64_t layer, std::span<const BatchRow> rows,
                         std::span<KvCache* const> caches, ForwardScratch& s, int n_threads) const;
    void attend(std::span<const BatchRow> rows, std::span<KvCache* const> caches,
                std::int64_t layer, ForwardScratch& s, int n_threads) const;
    void ffn_block(const LayerWeights& l, std::int64_t n, ForwardScratch& s, int n_threads) const;

    const ModelConfig& c_;
    const ModelWeights& w_;
};

}  // namespace ember::model

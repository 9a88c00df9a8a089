// The key/value cache of one sequence: for every layer, the keys and values of every position.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/llama_config.hpp"

namespace ember::model {

class KvCache {
public:
    KvCache() = default;
    KvCache(const LlamaConfig& config, std::int64_t n_ctx)
        : n_ctx_(n_ctx), n_layer_(config.n_layer), n_embd_kv_(config.n_embd_kv()),
          k_(static_cast<std::size_t>(config.n_layer * n_ctx * config.n_embd_kv())),
          v_(k_.size()) {}

    std::int64_t n_ctx() const noexcept { return n_ctx_; }
    std::int64_t n_layer() const noexcept { return n_layer_; }
    std::int64_t n_embd_kv() const noexcept { return n_embd_kv_; }

    /// Keys of `layer` at position `pos`: n_embd_kv floats (n_head_kv heads of head_dim).
    float* k(std::int64_t layer, std::int64_t pos) noexcept { return k_.data() + offset(layer, pos); }
    float* v(std::int64_t layer, std::int64_t pos) noexcept { return v_.data() + offset(layer, pos); }
    const float* k(std::int64_t layer, std::int64_t pos) const noexcept { return k_.data() + offset(layer, pos); }
    const float* v(std::int64_t layer, std::int64_t pos) const noexcept { return v_.data() + offset(layer, pos); }

    /// Moves the entries of positions [from, from + n) of every layer down to [to, to + n)
    /// (to <= from; overlapping ranges are fine). Keys keep their old rotation: re-rotate them
    /// (model/context_shift.hpp). Allocates nothing.
    void move_down(std::int64_t from, std::int64_t to, std::int64_t n) noexcept {
        const auto count = static_cast<std::ptrdiff_t>(n * n_embd_kv_);
        for (std::int64_t il = 0; il < n_layer_; ++il) {
            std::copy_n(k(il, from), count, k(il, to));
            std::copy_n(v(il, from), count, v(il, to));
        }
    }

    std::size_t bytes() const noexcept { return (k_.size() + v_.size()) * sizeof(float); }

private:
    std::size_t offset(std::int64_t layer, std::int64_t pos) const noexcept {
        return static_cast<std::size_t>((layer * n_ctx_ + pos) * n_embd_kv_);
    }
    std::int64_t n_ctx_ = 0, n_layer_ = 0, n_embd_kv_ = 0;
    std::vector<float> k_;  // [n_layer][n_ctx][n_embd_kv]
    std::vector<float> v_;  // [n_layer][n_ctx][n_embd_kv]
};

}  // namespace ember::model

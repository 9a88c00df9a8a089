// The last `capacity` accepted tokens, oldest first, in a fixed ring buffer (no allocation after
// construction), for the repetition, frequency and presence penalties.
#pragma once

#include <cstddef>
#include <vector>

#include "ember/types.hpp"

namespace ember::sampling {

class PenaltyHistory {
public:
    explicit PenaltyHistory(std::size_t capacity = 0) : tokens_(capacity) {}

    std::size_t capacity() const noexcept { return tokens_.size(); }
    std::size_t size() const noexcept { return size_; }

    /// Appends a token, dropping the oldest one when full (does nothing with capacity 0).
    void push(Token token) noexcept {
        if (tokens_.empty()) return;
        tokens_[(first_ + size_) % tokens_.size()] = token;
        if (size_ < tokens_.size()) {
            ++size_;
        } else {
            first_ = (first_ + 1) % tokens_.size();
        }
    }

    /// The i-th token, 0 = oldest.
    Token operator[](std::size_t i) const noexcept { return tokens_[(first_ + i) % tokens_.size()]; }

    void clear() noexcept { first_ = size_ = 0; }

private:
    std::vector<Token> tokens_;
    std::size_t first_ = 0;
    std::size_t size_ = 0;
};

}  // namespace ember::sampling

// A batch for one forward pass: rows of (token, position, sequence). Prefill is many rows of one
// sequence, decode one row; batched decode of many sessions and speculative verification are
// the same call with other rows.
#pragma once

#include <cstdint>

#include "ember/types.hpp"

namespace ember::model {

struct BatchRow {
    Token token = 0;
    std::int32_t pos = 0;   ///< Position in its sequence (0-based).
    std::int32_t seq = 0;   ///< Index into the caches passed to the forward pass.
    bool logits = false;    ///< Compute logits for this row.
    /// Keep this row's final hidden state (after the output norm, before the output projection)
    /// in ForwardScratch::hidden(), e.g. for embeddings.
    bool hidden = false;
};

}  // namespace ember::model

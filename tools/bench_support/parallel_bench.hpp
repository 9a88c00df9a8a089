// ember-bench --parallel: N sequences in one batch, as llama-batched-bench measures them. Each
// repetition prefills N prompts of P random tokens (forward passes of up to 512 rows mixing the
// sequences, logits for each sequence's last row), then decodes G tokens of every sequence
// together (one pass of N rows per step). Aggregate tokens per second of each phase.
#pragma once

#include <functional>
#include <vector>

#include "ember/model.hpp"
#include "ember/types.hpp"

namespace ember::bench {

struct ParallelTimes {
    std::vector<double> prefill_seconds;  ///< Per repetition: all N x P prompt tokens.
    std::vector<double> decode_seconds;   ///< Per repetition: G steps of N rows.
};

/// Runs `reps` repetitions for n_seq sequences (each n_prompt then n_gen tokens; either may be
/// 0; keys and values stored as kv_type) on `threads` threads, after one warm-up; `token()`
/// gives the random input tokens. Throws ember::Error when the KV pool or the scratch would not
/// fit in memory.
ParallelTimes run_parallel(const Model& model, int n_seq, int n_prompt, int n_gen, int threads, int reps,
                           KvType kv_type, const std::function<Token()>& token);

}  // namespace ember::bench

// Attention of a block of batch rows against one sequence's cached keys/values, for the query
// heads that share one key/value head (grouped-query attention). The cache is paged: the
// positions come as runs of consecutive positions (one run per page, model/kv_cache.hpp), stored
// as F32, F16 or Q8_0 and read in place: a run's keys in its page's key grid of this head
// ([dim][position]), its values in the page's value slabs ([slab][position][dim],
// kernels/kv_grid.hpp). Per ISA and KvType through
// FloatKernels::attend_f32 / _f16 / _q8_0.
//
// A block holds n_rows rows of one sequence (a prefill chunk; a decode step is a block of one
// row); row r reads the n_pos[r] keys from key start[r] of the runs (start: a sliding window's
// first position past the block's; null: every row starts at key 0). Each key tile is loaded
// once for every query of the block. Per query (row r, head j), t over the row's keys:
//
//   s[t] = scale * dot(q_rj, K[t])  (t < n_pos[r], the runs' positions in order);
//   softcap > 0 (gemma2): s[t] = tanh(s[t] * (1 / softcap)) * softcap, as llama.cpp;
//   p = softmax(s);  out_rj = sum_t p[t] * V[t]  (summed in key order)
//
// q_rj = q + r * stride + j * hd, out_rj = out + r * stride + j * hd. K[t] / V[t]: hd values of
// one head (Q8_0 values in blocks of 32, value = d * q). The
// dot is one chain of FMAs over the dims in order from 0 (the key grid puts 16 positions in a
// vector, so no sum across lanes): the same bits on every ISA and in the scalar twin. Softmax:
// max-shifted exp, sum in float, out scaled by 1/sum. Every query's result depends only on its
// own row: never on the block it was computed in (batch invariance).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

/// n consecutive positions of one head: K[t] and V[t] are position first + t of the key grid at
/// k and of the value slabs at v (pages of `block` positions, kernels/kv_grid.hpp).
struct KvRun {
    const std::uint8_t* k;
    const std::uint8_t* v;
    std::int64_t n;
    std::int64_t first;
    std::int64_t block;
};

/// The queries of one block: n_rows rows of n_q heads (see above).
struct AttendQueries {
    const float* q;
    float* out;
    std::int64_t n_rows;
    std::int64_t n_q;
    std::int64_t stride;        ///< floats from one row's queries (and outputs) to the next's
    const std::int64_t* n_pos;  ///< [n_rows] keys each row reads (>= 1)
    const std::int64_t* start = nullptr;  ///< [n_rows] each row's first key (null: all 0)
};

/// Floats of scratch an attention call needs (n_pos: the keys of the runs): every query's
/// scores and softmax sum, and a group of up to 8 queries transposed.
constexpr std::int64_t attend_scratch_floats(std::int64_t n_queries, std::int64_t n_pos, std::int64_t hd) noexcept {
    return n_queries * (n_pos + 1) + 8 * hd;
}

using AttendFn = void (*)(const AttendQueries& queries, std::int64_t hd, const KvRun* runs, std::int64_t n_runs,
                          float scale, float softcap, float* scratch);

/// One row's n_q heads (a block of one row): `scratch` holds attend_scratch_floats(n_q, n_pos, hd).
inline void attend_row(AttendFn fn, const float* q, std::int64_t n_q, std::int64_t hd, const KvRun* runs,
                       std::int64_t n_runs, std::int64_t n_pos, float scale, float softcap, float* out,
                       float* scratch) {
    const AttendQueries queries{q, out, 1, n_q, n_q * hd, &n_pos};
    fn(queries, hd, runs, n_runs, scale, softcap, scratch);
}

}  // namespace ember::kernels

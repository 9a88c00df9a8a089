// The loop every packed kernel shares (kernels/packed.hpp): tokens in blocks that stay in L2
// while the row groups stream by, then each 16-row group, then the block's tokens kMaxT at a
// time and the rest (1..kMaxT-1) in one call, each with its token count as a template argument
// for the kernel's register tiles:
//   packed_for_each<8>(n_groups, n_valid_rows, n_tok, token_block,
//                      [&]<int T>(std::int64_t g, std::int64_t rows, std::int64_t t) { ... });
// `rows`: how many of group g's 16 rows exist (the last group may have fewer); `t`: the first
// token of the call. Kernel code only: no STL.
#pragma once

#include <cstdint>

#include "kernels/isa/with_count-inl.hpp"
#include "kernels/packed_isa.hpp"

namespace ember::kernels {

template <int kMaxT, typename F>
inline void packed_for_each(std::int64_t n_groups, std::int64_t n_valid_rows, std::int64_t n_tok,
                            std::int64_t token_block, F&& f) {
    for (std::int64_t tb = 0; tb < n_tok; tb += token_block) {
        const std::int64_t te = tb + token_block < n_tok ? tb + token_block : n_tok;
        for (std::int64_t g = 0; g < n_groups; ++g) {
            const std::int64_t left = n_valid_rows - g * kPackRows;
            const std::int64_t rows = left < kPackRows ? left : kPackRows;
            std::int64_t t = tb;
            for (; t + kMaxT <= te; t += kMaxT) f.template operator()<kMaxT>(g, rows, t);
            with_count<kMaxT - 1>(te - t, [&]<int N>() { f.template operator()<N>(g, rows, t); });
        }
    }
}

/// packed_for_each with each tile's operands: kernel.template operator()<T>(nb, group bytes, a,
/// ad, ab, n_tok, y, ldy, rows) at group g and first token t, where a token's activations are
/// kActValues bytes and its bias kBiasWords words apart (Q4_0/Q8_0: 32 and 1; Q4_K/Q5_K: 256 and
/// 4; Q6_K: 256 and 16) and its da one float. The signature of every packed GEMM, then
/// `[]<int T>(auto... x) { group_kernel<T>(x...); }`.
template <int kMaxT, int kActValues, int kBiasWords, typename F>
inline void packed_tiles(std::int64_t nb, const std::uint8_t* w, std::size_t group_bytes, std::int64_t n_groups,
                         std::int64_t n_valid_rows, const std::int8_t* a, const float* ad, const std::int32_t* ab,
                         std::int64_t n_tok, float* y, std::int64_t ldy, std::int64_t token_block, F&& kernel) {
    packed_for_each<kMaxT>(n_groups, n_valid_rows, n_tok, token_block,
                           [&]<int T>(std::int64_t g, std::int64_t rows, std::int64_t t) {
                               kernel.template operator()<T>(nb, w + static_cast<std::size_t>(g) * group_bytes,
                                                             a + t * kActValues, ad + t, ab + t * kBiasWords, n_tok,
                                                             y + g * kPackRows + t * ldy, ldy, rows);
                           });
}

/// Calls of G row groups that stream a run once (decode, and small batches under one tile of
/// tokens): the run's full groups are split into G parts of q groups and call c takes group c of
/// each part (`q` groups apart), so each of the kernel's G weight streams reads one part front to
/// back, where consecutive calls of consecutive groups had each stream read every G-th group. Calls
/// f(c, q) for c = 0..q-1 and returns the groups they took (G * q), the first of the run; none
/// where q < 2 (the caller's consecutive calls take all). Each kernel's GEMM says whether it
/// spreads: it measured faster for some kernels and slower for others (docs/performance.md, "Decode
/// calls of groups far apart").
template <int G, typename F>
inline std::int64_t spread_group_calls(std::int64_t n_groups, std::int64_t n_valid_rows, F&& f) {
    const std::int64_t full = n_valid_rows / kPackRows < n_groups ? n_valid_rows / kPackRows : n_groups;
    const std::int64_t q = full / G;
    if (q < 2) return 0;
    for (std::int64_t c = 0; c < q; ++c) f(c, q);
    return G * q;
}

}  // namespace ember::kernels

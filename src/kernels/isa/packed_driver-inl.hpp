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

}  // namespace ember::kernels

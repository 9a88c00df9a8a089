// The legacy block kinds as compile-time traits, shared by the per-ISA kernels of Q4_0, Q4_1,
// Q5_0, Q5_1 and Q8_0 (types and constants only: nothing here is compiled into code).
#pragma once

#include "kernels/quant_blocks.hpp"

namespace ember::kernels {

enum LegacyKind { kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0 };

template <int K> struct Legacy;
/// W: weight block, A: activation block, offset: what the unsigned quants are biased by
/// (Q8_0 weights are signed; kernels working on unsigned bytes add 128), min: has a d*min term.
template <> struct Legacy<kQ4_0> { using W = BlockQ4_0; using A = BlockQ8_0; static constexpr int offset = 8; static constexpr bool min = false; static constexpr bool five = false; };
template <> struct Legacy<kQ4_1> { using W = BlockQ4_1; using A = BlockQ8_1; static constexpr int offset = 0; static constexpr bool min = true; static constexpr bool five = false; };
template <> struct Legacy<kQ5_0> { using W = BlockQ5_0; using A = BlockQ8_0; static constexpr int offset = 16; static constexpr bool min = false; static constexpr bool five = true; };
template <> struct Legacy<kQ5_1> { using W = BlockQ5_1; using A = BlockQ8_1; static constexpr int offset = 0; static constexpr bool min = true; static constexpr bool five = true; };
template <> struct Legacy<kQ8_0> { using W = BlockQ8_0; using A = BlockQ8_0; static constexpr int offset = 128; static constexpr bool min = false; static constexpr bool five = false; };

}  // namespace ember::kernels

/// Defines vec_dot_q4_0 ... and tile_q4_0 ... of the enclosing ISA namespace from a micro-kernel
/// template `Micro<K>` (Micro<K>::run<R, T>) and register-tile sizes R x T.
#define EMBER_LEGACY_EXPORTS(Micro, R, T)                                                            \
    EMBER_LEGACY_EXPORT_ONE(q4_0, kQ4_0, Micro, R, T)                                                \
    EMBER_LEGACY_EXPORT_ONE(q4_1, kQ4_1, Micro, R, T)                                                \
    EMBER_LEGACY_EXPORT_ONE(q5_0, kQ5_0, Micro, R, T)                                                \
    EMBER_LEGACY_EXPORT_ONE(q5_1, kQ5_1, Micro, R, T)                                                \
    EMBER_LEGACY_EXPORT_ONE(q8_0, kQ8_0, Micro, R, T)
#define EMBER_LEGACY_EXPORT_ONE(name, K, Micro, R, T)                                                \
    float vec_dot_##name(std::int64_t n, const void* w, const void* a) {                             \
        float y;                                                                                     \
        Micro<K>::template run<1, 1>(n / kQK, static_cast<const std::uint8_t*>(w), 0,               \
                                     static_cast<const std::uint8_t*>(a), 0, &y, 1);                \
        return y;                                                                                    \
    }                                                                                                \
    void tile_##name(std::int64_t n, const void* w, std::size_t ws, std::int64_t n_w, const void* a, \
                     std::size_t as, std::int64_t n_a, float* y, std::int64_t ldy) {                 \
        sweep_tiles<Micro<K>, R, T>(n / kQK, w, ws, n_w, a, as, n_a, y, ldy);                        \
    }

// A fast 64-bit hash for checksums of saved states and the model fingerprint: the xxHash64
// algorithm (four lanes of 8-byte multiply-rotate rounds, then an avalanche), written from its
// specification. Every step is a bijection of the state for fixed input and injective in the
// input for a fixed state, so any change of a single byte (or 8-byte word) changes the hash.
#pragma once

#include <cstdint>
#include <span>

namespace ember {

/// xxHash64 of `bytes` with `seed`.
std::uint64_t hash64(std::span<const std::uint8_t> bytes, std::uint64_t seed = 0) noexcept;

/// A hash of `bytes` computed over fixed 4 MiB blocks on up to `n_threads` threads, then over
/// the block hashes: the result does not depend on the thread count.
std::uint64_t hash64_blocks(std::span<const std::uint8_t> bytes, int n_threads);

}  // namespace ember

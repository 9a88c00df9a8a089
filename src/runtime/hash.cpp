#include "runtime/hash.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "runtime/parallel.hpp"

namespace ember {
namespace {

constexpr std::uint64_t P1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t P2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t P3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t P4 = 0x85EBCA77C2B2AE63ull;
constexpr std::uint64_t P5 = 0x27D4EB2F165667C5ull;

static_assert(std::endian::native == std::endian::little, "hash64 reads little-endian words");

inline std::uint64_t read64(const std::uint8_t* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

inline std::uint32_t read32(const std::uint8_t* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

inline std::uint64_t round(std::uint64_t acc, std::uint64_t input) noexcept {
    return std::rotl(acc + input * P2, 31) * P1;
}

inline std::uint64_t merge(std::uint64_t h, std::uint64_t lane) noexcept { return (h ^ round(0, lane)) * P1 + P4; }

constexpr std::size_t kBlock = std::size_t{4} << 20;

}  // namespace

std::uint64_t hash64(std::span<const std::uint8_t> bytes, std::uint64_t seed) noexcept {
    const std::uint8_t* p = bytes.data();
    const std::uint8_t* const end = p + bytes.size();
    std::uint64_t h;
    if (bytes.size() >= 32) {
        std::uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        for (; end - p >= 32; p += 32) {
            v1 = round(v1, read64(p));
            v2 = round(v2, read64(p + 8));
            v3 = round(v3, read64(p + 16));
            v4 = round(v4, read64(p + 24));
        }
        h = std::rotl(v1, 1) + std::rotl(v2, 7) + std::rotl(v3, 12) + std::rotl(v4, 18);
        h = merge(merge(merge(merge(h, v1), v2), v3), v4);
    } else {
        h = seed + P5;
    }
    h += bytes.size();
    for (; end - p >= 8; p += 8) h = std::rotl(h ^ round(0, read64(p)), 27) * P1 + P4;
    if (end - p >= 4) {
        h = std::rotl(h ^ (read32(p) * P1), 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; ++p) h = std::rotl(h ^ (*p * P5), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

std::uint64_t hash64_blocks(std::span<const std::uint8_t> bytes, int n_threads) {
    const std::size_t n_blocks = (bytes.size() + kBlock - 1) / kBlock;
    std::vector<std::uint64_t> block_hashes(n_blocks);
    parallel_for(static_cast<std::int64_t>(n_blocks), n_threads, 1, [&](std::int64_t b, std::int64_t e, int) {
        for (std::int64_t i = b; i < e; ++i) {
            const std::size_t at = static_cast<std::size_t>(i) * kBlock;
            block_hashes[static_cast<std::size_t>(i)] = hash64(bytes.subspan(at, std::min(kBlock, bytes.size() - at)));
        }
    });
    return hash64({reinterpret_cast<const std::uint8_t*>(block_hashes.data()), n_blocks * 8}, bytes.size());
}

}  // namespace ember

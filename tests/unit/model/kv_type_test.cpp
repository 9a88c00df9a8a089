// The KV cache's key grid ([dim][position] per page and head): stored and read back with a
// row's rounding, and copied between positions as stored.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "model/kv_type.hpp"

using ember::KvType;
using namespace ember::model;

namespace {

std::vector<float> random_head(std::int64_t hd, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 2.0f);
    std::vector<float> x(static_cast<std::size_t>(hd));
    for (float& v : x) v = nd(rng);
    return x;
}

/// A head's values rounded as the cache rounds a row.
std::vector<float> rounded(KvType type, const std::vector<float>& x) {
    const auto hd = static_cast<std::int64_t>(x.size());
    std::vector<std::uint8_t> row(kv_row_bytes(type, hd, hd));
    std::vector<float> y(x.size());
    kv_store_row(type, x.data(), row.data(), hd);
    kv_load_row(type, row.data(), y.data(), hd);
    return y;
}

}  // namespace

TEST_CASE("a key grid holds each position's keys as a row would, and copies them as stored", "[kv_type]") {
    for (const KvType type : {KvType::f32, KvType::f16, KvType::q8_0}) {
        for (const std::int64_t block : {1, 5, 16}) {
            const std::int64_t hd = 64;
            INFO(kv_type_name(type) << " block " << block);
            // Exactly the bytes of block rows (ASan holds the grid to them).
            const std::size_t bytes = static_cast<std::size_t>(block) * kv_row_bytes(type, hd, hd);
            std::vector<std::uint8_t> grid(bytes, 0xAB), other(bytes, 0xCD), other2(bytes, 0x32);
            std::vector<std::vector<float>> keys;
            for (std::int64_t u = 0; u < block; ++u) {
                keys.push_back(random_head(hd, static_cast<std::uint32_t>(u + 1)));
                kv_store_key(type, keys.back().data(), grid.data(), block, u, hd);
            }
            std::vector<float> got(static_cast<std::size_t>(hd));
            for (std::int64_t u = 0; u < block; ++u) {  // later positions did not disturb earlier ones
                kv_load_key(type, grid.data(), block, u, hd, got.data());
                REQUIRE(got == rounded(type, keys[static_cast<std::size_t>(u)]));
            }
            // Position block-1 of grid to position 0 of other: the same values, nothing else moved.
            // Copied onto two differently filled grids, the bytes written are those equal in both.
            kv_copy_key(type, grid.data(), block - 1, other.data(), 0, block, hd);
            kv_copy_key(type, grid.data(), block - 1, other2.data(), 0, block, hd);
            kv_load_key(type, other.data(), block, 0, hd, got.data());
            REQUIRE(got == rounded(type, keys.back()));
            std::size_t written = 0;
            for (std::size_t i = 0; i < bytes; ++i) written += other[i] == other2[i] ? 1 : 0;
            REQUIRE(written == kv_row_bytes(type, hd, hd));
        }
    }
}

// The KV cache's key grid ([dim][position] per page and head) and value slabs ([dim / 32]
// [position][dim % 32]): stored and read back with a row's rounding, and copied between
// positions as stored.
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

TEST_CASE("key grids and value slabs hold each position's row as a row would, and copy it as stored", "[kv_type]") {
    using Store = void (*)(KvType, const float*, std::uint8_t*, std::int64_t, std::int64_t, std::int64_t);
    using Load = void (*)(KvType, const std::uint8_t*, std::int64_t, std::int64_t, std::int64_t, float*);
    using Copy = void (*)(KvType, const std::uint8_t*, std::int64_t, std::uint8_t*, std::int64_t, std::int64_t, std::int64_t);
    struct Layout {
        const char* name;
        Store store;
        Load load;
        Copy copy;
    };
    for (const Layout& layout : {Layout{"keys", kv_store_key, kv_load_key, kv_copy_key},
                                 Layout{"values", kv_store_value, kv_load_value, kv_copy_value}}) {
        for (const KvType type : {KvType::f32, KvType::f16, KvType::q8_0}) {
            for (const std::int64_t hd : {20, 64, 96}) {  // 20: values as rows (one slab); 64, 96: slabs of 32
                if (type == KvType::q8_0 && hd % 32 != 0) continue;
                for (const std::int64_t block : {1, 5, 16}) {
                    INFO(layout.name << " " << kv_type_name(type) << " hd " << hd << " block " << block);
                    // Exactly the bytes of block rows (ASan holds the layout to them).
                    const std::size_t bytes = static_cast<std::size_t>(block) * kv_row_bytes(type, hd, hd);
                    std::vector<std::uint8_t> grid(bytes, 0xAB), other(bytes, 0xCD), other2(bytes, 0x32);
                    std::vector<std::vector<float>> rows;
                    for (std::int64_t u = 0; u < block; ++u) {
                        rows.push_back(random_head(hd, static_cast<std::uint32_t>(u + 1)));
                        layout.store(type, rows.back().data(), grid.data(), block, u, hd);
                    }
                    std::vector<float> got(static_cast<std::size_t>(hd));
                    for (std::int64_t u = 0; u < block; ++u) {  // later positions did not disturb earlier ones
                        layout.load(type, grid.data(), block, u, hd, got.data());
                        REQUIRE(got == rounded(type, rows[static_cast<std::size_t>(u)]));
                    }
                    // Position block-1 to position 0 of other: the same values, nothing else moved.
                    // Copied onto two differently filled layouts, the bytes written are those equal in both.
                    layout.copy(type, grid.data(), block - 1, other.data(), 0, block, hd);
                    layout.copy(type, grid.data(), block - 1, other2.data(), 0, block, hd);
                    layout.load(type, other.data(), block, 0, hd, got.data());
                    REQUIRE(got == rounded(type, rows.back()));
                    std::size_t written = 0;
                    for (std::size_t i = 0; i < bytes; ++i) written += other[i] == other2[i] ? 1 : 0;
                    REQUIRE(written == kv_row_bytes(type, hd, hd));
                }
            }
        }
    }
}

TEST_CASE("value slabs put a position's 32 values of a slab together, slab after slab", "[kv_type]") {
    // The layout attention's value passes read (kernels/kv_grid.hpp), F32: value i of position u
    // of a page of `block` at ((i / 32) * block + u) * 32 + i % 32 floats.
    const std::int64_t hd = 96, block = 16;
    std::vector<float> slabs(static_cast<std::size_t>(hd * block), -1.0f);
    for (std::int64_t u = 0; u < block; ++u) {
        std::vector<float> row(static_cast<std::size_t>(hd));
        for (std::int64_t i = 0; i < hd; ++i) row[static_cast<std::size_t>(i)] = static_cast<float>(u * 1000 + i);
        kv_store_value(KvType::f32, row.data(), reinterpret_cast<std::uint8_t*>(slabs.data()), block, u, hd);
    }
    for (std::int64_t u = 0; u < block; ++u) {
        for (std::int64_t i = 0; i < hd; ++i) {
            REQUIRE(slabs[static_cast<std::size_t>(((i / 32) * block + u) * 32 + i % 32)] == static_cast<float>(u * 1000 + i));
        }
    }
}

// The paged KV cache: sliding-window layers keep only what their queries read, and every query
// reads the same rows as from a cache that keeps every position, also across page boundaries,
// context shifts and save/restore into caches of other sizes.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <vector>

#include "kernels/kv_grid.hpp"
#include "model/config.hpp"
#include "model/kv_cache.hpp"

using ember::model::KvCache;

namespace {

// Three layers, the first and last with a window of 5; two kv heads of 4 values.
ember::model::ModelConfig sliding_config() {
    ember::model::ModelConfig c;
    c.n_layer = 3;
    c.n_head = 4;
    c.n_head_kv = 2;
    c.head_dim = 4;
    c.n_swa = 5;
    c.local = {1, 0, 1};
    return c;
}

// What the test wrote: the token id written at each position (positions move in a shift).
struct Model {
    std::vector<int> ids;  // id at position p
    float value(std::int64_t layer, int id, std::int64_t j, bool key) const {
        return static_cast<float>(layer * 100000 + id * 10 + j) * (key ? 1.0f : -1.0f);
    }
};

constexpr std::int64_t kRow = 8;  // n_embd_kv

std::vector<float> row_of(const Model& m, std::int64_t layer, int id, bool key) {
    std::vector<float> row(kRow);
    for (std::int64_t j = 0; j < kRow; ++j) row[static_cast<std::size_t>(j)] = m.value(layer, id, j, key);
    return row;
}

void write(KvCache& cache, Model& m, std::int64_t first, std::int64_t n, int& next_id) {
    REQUIRE(cache.reserve(first, first + n - 1));
    m.ids.resize(static_cast<std::size_t>(first));
    for (std::int64_t p = first; p < first + n; ++p) {
        const int id = next_id++;
        m.ids.push_back(id);
        for (std::int64_t il = 0; il < cache.n_layer(); ++il) {
            cache.store(il, p, row_of(m, il, id, true).data(), row_of(m, il, id, false).data());
        }
    }
}

// Every query at [first, end) reads exactly the rows of its window, in position order.
void check_reads(const KvCache& cache, const Model& m, std::int64_t first, std::int64_t end) {
    for (std::int64_t il = 0; il < cache.n_layer(); ++il) {
        for (std::int64_t p = first; p < end; ++p) {
            const std::int64_t w = cache.window(il);
            const std::int64_t lo = w == 0 ? 0 : std::max<std::int64_t>(0, p - w + 1);
            REQUIRE(cache.attend_first(il, p) == lo);
            std::int64_t pos = lo;
            cache.for_each_run(il, lo, p, [&](std::int32_t page, std::int64_t row, std::int64_t n) {
                const ember::model::KvPool& pool = cache.pool();
                const std::int64_t hd = pool.config().head_dim;
                for (std::int64_t r = 0; r < n; ++r, ++pos) {
                    const int id = m.ids[static_cast<std::size_t>(pos)];
                    // Each head's keys a grid [dim][position], values slabs [dim / w][position][dim % w].
                    const std::int64_t w = ember::kernels::slab_values(hd);
                    for (std::int64_t j = 0; j < kRow; ++j) {
                        float kx, vx;
                        std::memcpy(&kx, pool.k_grid(page, j / hd) + ((j % hd) * cache.block() + row + r) * 4, 4);
                        std::memcpy(&vx, pool.v_slabs(page, j / hd) + (((j % hd) / w * cache.block() + row + r) * w + j % w) * 4, 4);
                        REQUIRE(kx == m.value(il, id, j, true));
                        REQUIRE(vx == m.value(il, id, j, false));
                    }
                }
            });
            REQUIRE(pos == p + 1);
        }
    }
}

}  // namespace

TEST_CASE("sliding layers keep the window: reads equal a full cache's", "[kv]") {
    const auto c = sliding_config();
    for (const std::int64_t n_pinned : {0, 3}) {
        KvCache cache(c, 200, 4, n_pinned);
        // Global layer: 13 pages of 16; sliding layers far fewer.
        CHECK(cache.pool().n_pages() < 3 * 13);
        Model m;
        int id = 0;
        std::int64_t pos = 0;
        for (const std::int64_t n : {4, 1, 3, 1, 1, 2, 4, 4, 4, 4, 1, 1, 1, 1, 3, 4, 2, 4, 4, 4, 4, 4, 4, 4, 4}) {
            write(cache, m, pos, n, id);
            check_reads(cache, m, pos, pos + n);
            pos += n;
        }
        CHECK(cache.rewind_limit() > 0);  // sliding layers let pages go
        CHECK(!cache.holds(0, n_pinned + 2));
        CHECK(cache.holds(1, n_pinned + 2));
        CHECK_THROWS_WITH(cache.reserve(0, 0), Catch::Contains("sliding-window cache"));
        // Everything written later still reads right, up to the end of the context.
        for (; pos < 200; pos += 4) {
            const std::int64_t n = std::min<std::int64_t>(4, 200 - pos);
            write(cache, m, pos, n, id);
            check_reads(cache, m, pos, pos + n);
        }
    }
}

TEST_CASE("context shift of a sliding cache keeps the pinned rows and the window", "[kv][shift]") {
    const auto c = sliding_config();
    const std::int64_t n_keep = 3;
    for (const std::int64_t n_past : {9, 24, 40}) {  // before and after sliding layers dropped pages
        KvCache cache(c, 64, 2, n_keep);
        Model m;
        int id = 0;
        for (std::int64_t p = 0; p < n_past; p += 2) write(cache, m, p, std::min<std::int64_t>(2, n_past - p), id);
        for (const std::int64_t discard : {std::int64_t{1}, std::int64_t{6}, (n_past - n_keep) / 2}) {
            KvCache shifted = cache;  // a copy in a pool of its own
            Model ms = m;
            REQUIRE(shifted.move_down(n_keep + discard, n_keep, n_past - n_keep - discard));
            ms.ids.erase(ms.ids.begin() + n_keep, ms.ids.begin() + n_keep + discard);
            // Writing continues at the new end; every query reads its window (the pinned rows
            // included once the window reaches back to them).
            const std::int64_t end = n_past - discard;
            int next = 1000;
            for (std::int64_t p = end; p < end + 12; p += 2) {
                write(shifted, ms, p, 2, next);
                check_reads(shifted, ms, p, p + 2);
            }
        }
        check_reads(cache, m, n_past - 1, n_past);  // the original is untouched
    }
}

TEST_CASE("a sliding cache restores into caches of other sizes", "[kv][state]") {
    const auto c = sliding_config();
    KvCache saved(c, 64, 4, 2);
    Model m;
    int id = 0;
    for (std::int64_t p = 0; p < 40; p += 4) write(saved, m, p, 4, id);
    std::vector<KvCache::Held> held;
    for (std::int64_t il = 0; il < 3; ++il) held.push_back(saved.held(il, 40));
    CHECK(held[0].tail_begin > held[0].prefix_end);  // a gap: pages were let go
    CHECK(held[1].prefix_end == 40);                  // the global layer holds all

    for (const std::int64_t n_batch : {1, 4, 64}) {
        CAPTURE(n_batch);
        KvCache restored(c, 64, n_batch, 2);
        restored.check_restorable(held, 40, "state");
        REQUIRE(restored.prepare_restore(40));
        for (std::int64_t il = 0; il < 3; ++il) {
            for (std::int64_t p = 0; p < 40; ++p) {
                const bool in_saved = p < held[static_cast<std::size_t>(il)].prefix_end ||
                                      p >= held[static_cast<std::size_t>(il)].tail_begin;
                if (!in_saved || !restored.holds(il, p)) continue;
                std::vector<float> k(kRow), v(kRow);
                saved.load_keys(il, p, k.data());
                saved.load_values(il, p, v.data());
                restored.store(il, p, k.data(), v.data());
            }
        }
        // The next query (at 40) reads what the restored cache holds.
        Model mr = m;
        int next = 500;
        write(restored, mr, 40, 1, next);
        check_reads(restored, mr, 40, 41);
    }
    // A session pinning more rows than were kept cannot take the state.
    KvCache wider(c, 64, 4, 10);
    CHECK_THROWS_WITH(wider.check_restorable(held, 40, "state.bin"),
                      Catch::Contains("state.bin") && Catch::Contains("layer 0"));
}

// The KV page pool: pages taken as sequences grow, a full pool refused without changing
// anything, copy-on-write when sequences sharing pages diverge, and the prefix cache (sharing
// to the token, least recently used leaves evicted first).
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "model/config.hpp"
#include "model/kv_cache.hpp"
#include "model/kv_pool.hpp"

using ember::Token;
using ember::model::KvCache;
using ember::model::KvPool;
using ember::model::KvPoolOptions;

namespace {

// Two global layers, one kv head of 4 values: rows of 16 bytes (F32).
ember::model::ModelConfig config() {
    ember::model::ModelConfig c;
    c.n_layer = 2;
    c.n_head = 1;
    c.n_head_kv = 1;
    c.head_dim = 4;
    c.local = {0, 0};
    return c;
}

KvPoolOptions pool_options(std::int64_t pages, bool prefix_cache = true) {
    KvPoolOptions o;
    o.block = 4;
    o.pages = pages;
    o.prefix_cache = prefix_cache;
    return o;
}

// Writes a recognizable row for (token, position) at every layer.
void fill(KvCache& cache, std::int64_t first, const std::vector<Token>& tokens) {
    REQUIRE(cache.reserve(first, static_cast<std::int64_t>(tokens.size()) - 1));
    for (std::int64_t p = first; p < static_cast<std::int64_t>(tokens.size()); ++p) {
        for (std::int64_t l = 0; l < cache.n_layer(); ++l) {
            const float x[4] = {static_cast<float>(tokens[static_cast<std::size_t>(p)]), static_cast<float>(p),
                                static_cast<float>(l), 1.0f};
            cache.store(l, p, x, x);
        }
    }
}

bool row_is(const KvCache& cache, std::int64_t l, std::int64_t p, Token t) {
    float x[4];
    cache.load_keys(l, p, x);
    return x[0] == static_cast<float>(t) && x[1] == static_cast<float>(p) && x[2] == static_cast<float>(l);
}

std::vector<Token> seq(std::initializer_list<Token> t) { return t; }

}  // namespace

TEST_CASE("kv pool: pages as sequences grow; a full pool changes nothing", "[kv][pool]") {
    const auto c = config();
    KvPool pool(c, pool_options(8, false));  // 8 pages = 2 layers x 4 blocks of 4 tokens
    KvCache a(pool, 64), b(pool, 64);
    fill(a, 0, seq({1, 2, 3, 4, 5}));  // 2 blocks x 2 layers
    CHECK(pool.free_pages() == 4);
    fill(b, 0, seq({9, 9, 9, 9, 9, 9, 9, 9}));  // 2 blocks x 2 layers
    CHECK(pool.free_pages() == 0);
    // a needs a third block: refused, and a and b are as they were.
    CHECK_FALSE(a.reserve(5, 8));
    CHECK(a.size() == 5);
    for (std::int64_t p = 0; p < 5; ++p) CHECK(row_is(a, 0, p, seq({1, 2, 3, 4, 5})[static_cast<std::size_t>(p)]));
    for (std::int64_t p = 0; p < 8; ++p) CHECK(row_is(b, 1, p, 9));
    // Writing inside a's last block needs no page.
    CHECK(a.reserve(5, 7));
    b.truncate(3);  // gives its second block back
    CHECK(pool.free_pages() == 2);
    CHECK(a.reserve(8, 8));
    a.clear();
    b.clear();
    CHECK(pool.free_pages() == 8);
}

TEST_CASE("kv pool: forked sequences share pages and copy a page before writing it", "[kv][pool][cow]") {
    const auto c = config();
    KvPool pool(c, pool_options(16, false));
    KvCache a(pool, 64);
    fill(a, 0, seq({1, 2, 3, 4, 5, 6}));  // blocks 0 (full) and 1 (2 rows)
    const std::int64_t used = 16 - pool.free_pages();
    KvCache b = a.fork();
    CHECK(pool.free_pages() == 16 - used);  // nothing copied yet
    CHECK(a.page_of(0, 1) == b.page_of(0, 1));
    // They diverge at position 6: each writes its own copy of block 1; block 0 stays shared.
    fill(a, 6, seq({1, 2, 3, 4, 5, 6, 70}));
    fill(b, 6, seq({1, 2, 3, 4, 5, 6, 80, 81}));
    CHECK(a.page_of(0, 0) == b.page_of(0, 0));
    CHECK(a.page_of(0, 1) != b.page_of(0, 1));
    for (std::int64_t l = 0; l < 2; ++l) {
        for (std::int64_t p = 0; p < 6; ++p) {
            CHECK(row_is(a, l, p, p + 1));
            CHECK(row_is(b, l, p, p + 1));
        }
        CHECK(row_is(a, l, 6, 70));
        CHECK(row_is(b, l, 6, 80));
        CHECK(row_is(b, l, 7, 81));
    }
    a.clear();
    CHECK(row_is(b, 0, 0, 1));  // b still holds the shared block
    b.clear();
    CHECK(pool.free_pages() == 16);
}

TEST_CASE("kv pool: the prefix cache shares the longest cached prefix, to the token", "[kv][pool][prefix]") {
    const auto c = config();
    KvPool pool(c, pool_options(32));
    const auto prompt = seq({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    {
        KvCache first(pool, 64);
        CHECK(pool.match(prompt, 9, first) == 0);  // nothing cached yet
        fill(first, 0, prompt);
        pool.insert(prompt, 10, first, /*partial=*/true);  // blocks [1..4] [5..8] [9, 10]
    }
    CHECK(pool.free_pages() < 32);  // the cache keeps the finished sequence's pages

    // The same start, diverging inside the second block: shares 6 tokens (block 0, and block 1
    // up to the divergence, copied at the first write).
    KvCache b(pool, 64);
    const auto other = seq({1, 2, 3, 4, 5, 6, 99, 98});
    CHECK(pool.match(other, 7, b) == 6);
    CHECK(b.size() == 6);
    fill(b, 6, other);
    for (std::int64_t p = 0; p < 6; ++p) CHECK(row_is(b, 1, p, p + 1));
    CHECK(row_is(b, 1, 6, 99));
    // The cached block 1 was not touched by b's write.
    KvCache c2(pool, 64);
    CHECK(pool.match(prompt, 9, c2) == 9);  // blocks 0, 1 and the partial [9, 10] up to the limit
    for (std::int64_t p = 0; p < 9; ++p) CHECK(row_is(c2, 0, p, p + 1));
    // The limit keeps the last token to run (its logits are needed).
    KvCache d(pool, 64);
    CHECK(pool.match(seq({1, 2, 3, 4}), 3, d) == 3);
    CHECK(pool.cache_stats().hits == 3);
    CHECK(pool.cache_stats().hit_tokens == 18);
}

TEST_CASE("kv pool: a full pool evicts the least recently used cached leaves", "[kv][pool][prefix]") {
    const auto c = config();
    KvPool pool(c, pool_options(8));  // 4 blocks of 4 tokens (2 layers)
    {
        KvCache a(pool, 64);
        fill(a, 0, seq({1, 2, 3, 4, 5, 6, 7, 8}));
        pool.insert(seq({1, 2, 3, 4, 5, 6, 7, 8}), 8, a, true);
    }
    {
        KvCache b(pool, 64);
        fill(b, 0, seq({20, 21, 22, 23}));
        pool.insert(seq({20, 21, 22, 23}), 4, b, true);
    }
    CHECK(pool.free_pages() == 2);
    CHECK(pool.available_pages() == 8);  // every cached page can go
    // A sequence holding [1..4] keeps that block (and so its cached parent) alive.
    KvCache held(pool, 64);
    CHECK(pool.match(seq({1, 2, 3, 4, 0}), 4, held) == 4);
    CHECK(pool.available_pages() == 6);
    // Needing 3 blocks: the free one, then the oldest evictable leaf ([5..8]), then [20..23].
    KvCache big(pool, 64);
    CHECK(big.reserve(0, 11));
    CHECK(pool.cache_stats().evicted == 2);
    KvCache probe(pool, 64);
    CHECK(pool.match(seq({1, 2, 3, 4, 5, 6, 7, 8, 0}), 8, probe) == 4);  // [5..8] is gone
    probe.clear();
    CHECK_FALSE(big.reserve(12, 15));  // nothing left to evict: held's block is in use
    CHECK(row_is(held, 0, 3, 4));
}

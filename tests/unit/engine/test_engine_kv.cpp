// The Engine's paged KV cache: requests share one pool of pages; when it runs out the newest
// requests pause and resume (recomputing their cache) with unchanged results; a request the
// pool cannot hold even alone ends with Status::cache_full and disturbs nobody; the prefix
// cache gives later prompts the keys and values of a shared start; F16 keys and values batch
// exactly as a lone F16 session.
#include <catch2/catch.hpp>

#include "api/model_impl.hpp"
#include "engine_test_util.hpp"

using ember::Engine;
using ember::RequestHandle;
using ember::RequestResult;
using ember::Status;
using ember::StopReason;
using engine_test::check_equal;
using engine_test::eopts;
using engine_test::reference;
using engine_test::request_for;
using engine_test::Spec;
using engine_test::stories;

TEST_CASE("engine: a pool smaller than the running requests need pauses the newest; results unchanged",
          "[engine][kv][pool]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    std::vector<Spec> all;
    for (int i = 0; i < 10; ++i) {
        all.push_back({engine_test::kPrompts[i], i % 2 == 0 ? 0 : 40 + static_cast<std::uint64_t>(i), 30 + 4 * (i % 4), {}});
    }
    std::vector<ember::GenerateResult> want;
    for (const Spec& s : all) want.push_back(reference(model, s));
    for (const bool prefix_cache : {false, true}) {
        CAPTURE(prefix_cache);
        auto o = eopts(8, 16);
        o.kv_cache_tokens = 160;  // 10 blocks of 16: 8 requests of ~50 tokens need ~32
        o.prefix_cache = prefix_cache;
        Engine engine(model, o);
        std::vector<RequestHandle> handles;
        for (const Spec& s : all) handles.push_back(engine.submit(request_for(model, s)));
        for (std::size_t i = 0; i < all.size(); ++i) {
            CAPTURE(i);
            check_equal(handles[i].wait(), want[i]);
        }
        const auto st = engine.stats();
        CHECK(st.preemptions > 0);
        CHECK(st.kv_pages == 10 * ember::detail::ModelAccess::impl(model)->config.n_layer);  // pages are one layer each
        if (!prefix_cache) CHECK(st.kv_pages_free == st.kv_pages);  // every page came back
    }
}

TEST_CASE("engine: a request the pool cannot hold alone ends with cache_full; the others go on",
          "[engine][kv][pool]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const Spec big{"Once upon a time", 0, 100, {}};  // needs more than the pool's 32 positions
    const Spec small{"The little dog", 0, 8, {}};
    auto o = eopts(2, 8);
    o.kv_cache_tokens = 32;
    Engine engine(model, o);
    auto hb = engine.submit(request_for(model, big));
    auto hs = engine.submit(request_for(model, small));
    const RequestResult rb = hb.wait();
    CHECK(rb.stop_reason == StopReason::context_full);
    CHECK(rb.status == Status::cache_full);
    const auto full = reference(model, big);
    REQUIRE(rb.tokens.size() < full.tokens.size());
    CHECK(std::equal(rb.tokens.begin(), rb.tokens.end(), full.tokens.begin()));  // right until then
    check_equal(hs.wait(), reference(model, small));
    CHECK(std::string(ember::to_string(Status::cache_full)) == "cache_full");
}

TEST_CASE("engine: the prefix cache gives later prompts the shared start; results unchanged",
          "[engine][kv][prefix]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const std::string system = "Once upon a time, there was a little girl named Lily. She liked to play in the park.";
    const int n_system = static_cast<int>(model.tokenize(system).size());
    REQUIRE(n_system > 20);
    const std::vector<Spec> all = {{system, 0, 12, {}},
                                   {system + " One day", 0, 12, {}},
                                   {system + " Her mom", 3, 12, {}},
                                   {system + " One day, she", 0, 12, {}}};
    for (const bool prefix_cache : {true, false}) {
        CAPTURE(prefix_cache);
        auto o = eopts(4, 64);
        o.prefix_cache = prefix_cache;
        Engine engine(model, o);
        // The first runs alone; the others come after it finished (its blocks are cached).
        check_equal(engine.submit(request_for(model, all[0])).wait(), reference(model, all[0]));
        std::vector<RequestHandle> handles;
        for (std::size_t i = 1; i < all.size(); ++i) handles.push_back(engine.submit(request_for(model, all[i])));
        for (std::size_t i = 1; i < all.size(); ++i) {
            CAPTURE(i);
            const RequestResult r = handles[i - 1].wait();
            check_equal(r, reference(model, all[i]));
            if (prefix_cache) {
                CHECK(r.cached_tokens >= n_system - 1);  // the system prompt, to the token
                CHECK(r.cached_tokens < r.prompt_tokens);
            } else {
                CHECK(r.cached_tokens == 0);
            }
        }
        const auto st = engine.stats();
        CHECK(st.prefix_hits == (prefix_cache ? 3 : 0));
        if (prefix_cache) CHECK(st.prefix_hit_tokens >= 3 * (n_system - 1));
    }
}

TEST_CASE("engine: requests submitted together with one prompt prefill it once; results unchanged",
          "[engine][kv][prefix]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const std::string prompt = "Once upon a time, there was a little girl named Lily. She liked to play in the park "
                               "with her friends and her dog.";
    const int n_prompt = static_cast<int>(model.tokenize(prompt).size());
    REQUIRE(n_prompt > 32);
    // n samples of one prompt (seeds 1..4), and one other prompt that must not wait for them.
    std::vector<Spec> all;
    for (std::uint64_t seed = 1; seed <= 4; ++seed) all.push_back({prompt, seed, 10, {}});
    all.push_back({"The little dog", 0, 10, {}});
    auto o = eopts(5, 16);  // the prompt takes several steps: the others see it half done
    o.kv_block = 16;
    Engine engine(model, o);
    std::vector<RequestHandle> handles;
    for (const Spec& s : all) handles.push_back(engine.submit(request_for(model, s)));
    const int shared = (n_prompt - 1) / 16 * 16;
    for (std::size_t i = 0; i < all.size(); ++i) {
        CAPTURE(i);
        const RequestResult r = handles[i].wait();
        check_equal(r, reference(model, all[i]));
        if (i >= 1 && i <= 3) CHECK(r.cached_tokens >= shared);
    }
    CHECK(handles[0].wait().cached_tokens == 0);
    const auto st = engine.stats();
    // The three copies hit; the other prompt may too (its BOS), when it is admitted after the
    // first block of the shared prompt is cached.
    CHECK(st.prefix_hits >= 3);
    // The prompt ran once in whole blocks, plus each copy's rest; the other prompt once.
    const int other = static_cast<int>(model.tokenize(all[4].prompt).size());
    CHECK(st.prefilled_tokens <= n_prompt + 3 * (n_prompt - shared) + other);
}

TEST_CASE("engine: F16 keys and values give what a lone F16 session gives", "[engine][kv][batch-invariance]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    auto o = eopts(5, 16);
    o.kv_type = ember::KvType::f16;
    o.kv_block = 8;
    Engine engine(model, o);
    std::vector<Spec> all;
    for (int i = 0; i < 6; ++i) all.push_back({engine_test::kPrompts[i + 4], i % 2 == 0 ? 0 : 90 + static_cast<std::uint64_t>(i), 24, {}});
    std::vector<RequestHandle> handles;
    for (const Spec& s : all) handles.push_back(engine.submit(request_for(model, s)));
    for (std::size_t i = 0; i < all.size(); ++i) {
        CAPTURE(i);
        auto so = session_test::sopts(256);
        so.kv_type = ember::KvType::f16;
        ember::Session session(model, so);
        REQUIRE(session.prefill(model.tokenize(all[i].prompt)) == Status::ok);
        auto sampler = engine_test::sampler_for(all[i].seed);
        check_equal(handles[i].wait(), session.generate(sampler, session_test::gopts(all[i].max_tokens)));
    }
    o.kv_type = ember::KvType::f32;
    CHECK(2 * engine.stats().kv_bytes == Engine(model, o).stats().kv_bytes);  // half the bytes of F32
}

TEST_CASE("engine: bad KV options are errors", "[engine][kv]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    auto o = eopts(2, 8, 64);
    o.kv_block = 0;
    CHECK_THROWS_WITH(Engine(model, o), Catch::Contains("kv_block"));
    o.kv_block = 5000;
    CHECK_THROWS_WITH(Engine(model, o), Catch::Contains("kv_block"));
    o.kv_block = 16;
    o.kv_cache_tokens = -1;
    CHECK_THROWS_WITH(Engine(model, o), Catch::Contains("kv_cache_tokens"));
    o.kv_cache_tokens = std::int64_t{1} << 50;
    CHECK_THROWS_AS(Engine(model, o), ember::Error);
    o.kv_cache_tokens = 0;
    o.kv_type = ember::KvType::q8_0;  // stories260K's heads hold 8 values, not whole blocks of 32
    CHECK_THROWS_WITH(Engine(model, o), Catch::Contains("Q8_0"));
    o.kv_type = static_cast<ember::KvType>(77);
    CHECK_THROWS_AS(Engine(model, o), ember::Error);
    auto so = session_test::sopts(64);
    so.kv_type = ember::KvType::q8_0;
    CHECK_THROWS_WITH(ember::Session(model, so), Catch::Contains("Q8_0"));
}

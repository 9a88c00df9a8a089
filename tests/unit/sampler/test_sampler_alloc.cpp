// sample() allocates nothing after the first call: this executable replaces the global
// operator new and counts calls while a flag is set.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "ember/sampler.hpp"
#include "sampler_test_util.hpp"

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void* counted_alloc(std::size_t n, std::size_t align = 0) {
    if (g_counting.load(std::memory_order_relaxed)) {
        g_allocations.fetch_add(1, std::memory_order_relaxed);
    }
    if (n == 0) n = 1;
    void* p = align > alignof(std::max_align_t)
                  ? std::aligned_alloc(align, (n + align - 1) / align * align)
                  : std::malloc(n);
    if (!p) throw std::bad_alloc();
    return p;
}

}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) {
    return counted_alloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
    return counted_alloc(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

long allocations_over_64_samples(const ember::SamplerOptions& options,
                                 const std::vector<float>& logits) {
    ember::Sampler sampler(options);
    for (ember::Token t : {1, 2, 3, 2}) sampler.accept(t);
    sampler.sample(logits);  // sizes the buffers
    g_allocations = 0;
    g_counting = true;
    float sink = 0.0f;
    for (int i = 0; i < 64; ++i) {
        sampler.sample(logits);
        sampler.accept(static_cast<ember::Token>(i));
        sink += sampler.last().probability + static_cast<float>(sampler.candidates().size());
    }
    g_counting = false;
    CHECK(sink > 0.0f);
    return g_allocations.load();
}

}  // namespace

TEST_CASE("the allocation counter sees allocations", "[sampler][alloc]") {
    g_allocations = 0;
    g_counting = true;
    auto* v = new std::vector<int>(100);
    g_counting = false;
    delete v;
    CHECK(g_allocations.load() >= 2);
}

TEST_CASE("sample() allocates nothing after the first call", "[sampler][alloc]") {
    const auto logits = sampler_test::random_logits(32000, 17, 3.0f);

    ember::SamplerOptions every_stage;
    every_stage.seed = 1;
    every_stage.repeat_penalty = 1.1f;
    every_stage.frequency_penalty = 0.2f;
    every_stage.presence_penalty = 0.1f;
    every_stage.typical_p = 0.9f;
    every_stage.logit_bias = {{5, -std::numeric_limits<float>::infinity()}, {7, 1.5f}};
    CHECK(allocations_over_64_samples(every_stage, logits) == 0);

    ember::SamplerOptions big_top_p;  // top-p over the whole vocabulary, both sorting passes
    big_top_p.seed = 2;
    big_top_p.top_k = 0;
    big_top_p.top_p = 0.99f;
    big_top_p.min_p = 0.0f;
    CHECK(allocations_over_64_samples(big_top_p, logits) == 0);

    ember::SamplerOptions reordered = every_stage;
    reordered.order = {ember::SamplerStage::temperature, ember::SamplerStage::min_p,
                       ember::SamplerStage::top_p,       ember::SamplerStage::typical_p,
                       ember::SamplerStage::top_k,       ember::SamplerStage::penalties,
                       ember::SamplerStage::logit_bias};
    CHECK(allocations_over_64_samples(reordered, logits) == 0);

    ember::SamplerOptions greedy;
    greedy.temperature = 0.0f;
    greedy.repeat_penalty = 1.3f;
    greedy.logit_bias = {{0, 2.0f}};
    CHECK(allocations_over_64_samples(greedy, logits) == 0);
}

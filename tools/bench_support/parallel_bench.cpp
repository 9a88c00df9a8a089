#include "bench_support/parallel_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "api/model_impl.hpp"
#include "model/batch.hpp"
#include "model/decoder.hpp"
#include "model/kv_cache.hpp"
#include "model/kv_pool.hpp"
#include "model/kv_type.hpp"
#include "runtime/fail.hpp"
#include "runtime/memory.hpp"

namespace ember::bench {
namespace {

constexpr std::int64_t kPassRows = 512;  // rows of one prefill pass (llama.cpp's default ubatch)
constexpr std::int64_t kBlock = 16;      // positions per KV page

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ParallelTimes run_parallel(const Model& model, int n_seq, int n_prompt, int n_gen, int threads, int reps,
                           KvType kv_type, const std::function<Token()>& token) {
    const auto& impl = *detail::ModelAccess::impl(model);
    const auto& c = impl.config;
    const std::int64_t n_ctx = std::int64_t{n_prompt} + n_gen + 1;
    const std::int64_t pages = std::int64_t{n_seq} * c.n_layer * ((n_ctx + kBlock - 1) / kBlock);
    if (pages >= (std::int64_t{1} << 31)) fail("--parallel " + std::to_string(n_seq) + ": too many KV pages");
    const std::int64_t max_rows = std::max<std::int64_t>(n_seq, std::min<std::int64_t>(kPassRows, std::int64_t{n_seq} * n_prompt));
    model::KvPoolOptions po;
    po.block = kBlock;
    po.pages = pages;
    po.type = kv_type;
    const std::uint64_t pool_bytes =
        2 * model::kv_row_bytes(po.type, c.n_embd_kv(), c.head_dim) * static_cast<std::uint64_t>(pages * kBlock);
    const std::int64_t scratch_bytes =
        model::ForwardScratch::estimate_bytes(c, c.n_vocab, max_rows, n_ctx, n_seq, threads);
    check_memory(pool_bytes + static_cast<std::uint64_t>(scratch_bytes),
                 "--parallel " + std::to_string(n_seq) + " (KV pool " + format_bytes(pool_bytes) + ")");
    model::KvPool pool(c, po);
    model::ForwardScratch scratch(c, impl.weights, max_rows, n_ctx, n_seq, threads);
    std::vector<model::KvCache> caches;
    std::vector<model::KvCache*> cache_ptrs;
    for (int s = 0; s < n_seq; ++s) caches.emplace_back(pool, n_ctx);
    for (auto& cache : caches) cache_ptrs.push_back(&cache);
    const std::function<bool()> no_cancel;
    std::vector<model::BatchRow> rows;
    const auto pass = [&] {
        for (const auto& r : rows) {
            if (!caches[static_cast<std::size_t>(r.seq)].reserve(r.pos, r.pos)) fail("--parallel: the KV pool is full");
        }
        if (!impl.forward.run(rows, cache_ptrs, scratch, threads, no_cancel)) fail("--parallel: forward pass failed");
        rows.clear();
    };
    const Token bos = model.bos() >= 0 ? model.bos() : 0;

    ParallelTimes times;
    for (int r = -1; r < reps; ++r) {  // r = -1: warm-up
        for (auto& cache : caches) cache.clear();
        auto t0 = std::chrono::steady_clock::now();
        for (int s = 0; s < n_seq; ++s) {  // sequence after sequence, passes of up to kPassRows rows
            for (int p = 0; p < n_prompt; ++p) {
                rows.push_back({p == 0 ? bos : token(), p, s, p == n_prompt - 1});
                if (static_cast<std::int64_t>(rows.size()) == max_rows) pass();
            }
        }
        if (!rows.empty()) pass();
        const double prefill = since(t0);
        t0 = std::chrono::steady_clock::now();
        for (int g = 0; g < n_gen; ++g) {
            for (int s = 0; s < n_seq; ++s) rows.push_back({token(), n_prompt + g, s, true});
            pass();
        }
        const double decode = since(t0);
        if (r >= 0) {
            times.prefill_seconds.push_back(prefill);
            times.decode_seconds.push_back(decode);
        }
    }
    return times;
}

}  // namespace ember::bench

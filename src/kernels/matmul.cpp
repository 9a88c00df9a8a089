#include "kernels/matmul.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "kernels/dispatch.hpp"
#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"
#include "runtime/parallel_runs.hpp"
#include "runtime/zeroed_memory.hpp"

namespace ember::kernels {

struct WeightMatrixAccess {
    static WeightMatrix make(const gguf::TensorInfo& t, std::size_t row_bytes) {
        WeightMatrix w;
        w.type_ = t.type;
        w.n_rows_ = t.n_rows();
        w.n_cols_ = t.ne[0];
        w.row_bytes_ = row_bytes;
        w.data_ = t.data;
        return w;
    }

    // Replaces the view by a packed copy (parallel over groups; the source is read once, through
    // `file` where given, in slices of up to 256 KiB (kept in L2) into a per-task buffer).
    static void pack(WeightMatrix& w, const PackedLayout& k, const gguf::TensorInfo& t, const gguf::File* file,
                     ZeroedArena* arena) {
        const std::int64_t n_groups = (w.n_rows_ + kPackRows - 1) / kPackRows;
        const std::size_t gb = k.group_bytes(w.n_cols_);
        const std::size_t total = gb * static_cast<std::size_t>(n_groups);
        std::shared_ptr<std::uint8_t> owned = arena != nullptr ? arena->take(total) : nullptr;
        if (!owned) owned = allocate_zeroed_pages(total, "repacking " + std::string(t.name));
        std::uint8_t* buf = owned.get();
        const std::uint8_t* src = w.data_;
        const std::size_t rb = w.row_bytes_;
        const std::int64_t n_rows = w.n_rows_, n_cols = w.n_cols_;
        const std::int64_t slice_groups = std::max<std::int64_t>(1, static_cast<std::int64_t>((std::size_t{256} << 10) / (rb * kPackRows)));
        parallel_for(n_groups, hardware_threads(), 1, [&](std::int64_t g0, std::int64_t g1, int) {
            std::vector<std::uint8_t> slice;
            for (std::int64_t s0 = g0; s0 < g1; s0 += slice_groups) {
                const std::int64_t s1 = std::min(g1, s0 + slice_groups);
                const std::int64_t r0 = s0 * kPackRows, r1 = std::min(n_rows, s1 * kPackRows);
                const std::uint8_t* rows = src + static_cast<std::size_t>(r0) * rb;
                if (file != nullptr) {
                    slice.resize(static_cast<std::size_t>(r1 - r0) * rb);
                    file->copy(t, static_cast<std::size_t>(r0) * rb, slice.size(), slice.data());
                    rows = slice.data();
                }
                for (std::int64_t g = s0; g < s1; ++g) {
                    const std::int64_t gr = g * kPackRows;
                    k.pack_group(rows + static_cast<std::size_t>(gr - r0) * rb, rb,
                                 std::min<std::int64_t>(kPackRows, n_rows - gr), n_cols,
                                 buf + static_cast<std::size_t>(g) * gb);
                }
            }
        });
        w.owned_ = std::move(owned);
        w.data_ = buf;
        w.group_bytes_ = gb;
    }
};

namespace {

constexpr std::size_t kScratchAlign = 64;
constexpr std::int64_t kRowGrain = 16;     // weight rows per scheduling unit
constexpr std::int64_t kTokenBlock = 64;   // activation rows kept hot while a row block is swept

std::size_t row_bytes_of(TensorType type, std::int64_t n_cols) {
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(type));
    return static_cast<std::size_t>(n_cols / traits->block_size * traits->block_bytes);
}

const TypeKernels& kernels_for(const WeightMatrix& w, Isa isa) {
    const TypeKernels* k = type_kernels(w.type(), isa);
    if (k == nullptr) fail("matmul: no kernels for type " + std::string(tensor_type_name(w.type())));
    return *k;
}

std::string tensor_label(const gguf::TensorInfo& t) {
    return "tensor '" + std::string(t.name) + "' (" + std::string(tensor_type_name(t.type)) +
           ", info at byte " + std::to_string(t.info_offset) + ")";
}

}  // namespace

static bool packing_enabled() {
    static const bool enabled = [] {
        const char* env = std::getenv("EMBER_PACK");
        return env == nullptr || std::strcmp(env, "0") != 0;
    }();
    return enabled;
}

std::size_t WeightMatrix::packed_bytes_bound(const gguf::TensorInfo& tensor) noexcept {
    const TypeKernels* k = type_kernels(tensor.type, Isa::scalar);
    if (k == nullptr || k->packed == nullptr || tensor.ne[0] <= 0 || tensor.n_rows() <= 0) return 0;
    const auto n_groups = static_cast<std::size_t>((tensor.n_rows() + kPackRows - 1) / kPackRows);
    std::size_t bytes = 0;
    if (__builtin_mul_overflow(k->packed->group_bytes(tensor.ne[0]), n_groups, &bytes)) return 0;
    return bytes;
}

WeightMatrix WeightMatrix::prepare(const gguf::TensorInfo& tensor, Packing packing, const gguf::File* file,
                                   ZeroedArena* arena) {
    const TypeKernels* k = type_kernels(tensor.type, Isa::scalar);
    if (k == nullptr) fail(tensor_label(tensor) + ": type not supported by matmul");
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(tensor.type));
    if (tensor.ne[0] <= 0 || tensor.ne[0] % traits->block_size != 0) {
        fail(tensor_label(tensor) + ": row length " + std::to_string(tensor.ne[0]) +
             " is not a multiple of the block size " + std::to_string(traits->block_size));
    }
    if (tensor.data == nullptr && tensor.n_rows() > 0) fail(tensor_label(tensor) + ": no data");
    const std::size_t row_bytes = row_bytes_of(tensor.type, tensor.ne[0]);
    if (tensor.n_bytes != 0 && tensor.n_bytes < row_bytes * static_cast<std::size_t>(tensor.n_rows())) {
        fail(tensor_label(tensor) + ": holds " + std::to_string(tensor.n_bytes) + " bytes, less than " +
             std::to_string(tensor.n_rows()) + " rows of " + std::to_string(row_bytes));
    }
    WeightMatrix w = WeightMatrixAccess::make(tensor, row_bytes);
    bool pack = false;
    if (packing == Packing::always) {
        pack = k->packed != nullptr;
    } else if (packing == Packing::automatic && packing_enabled()) {
        const TypeKernels* active = type_kernels(tensor.type, active_isa());
        pack = active->packed != nullptr && active->prefer_packed;
    }
    if (pack && w.n_rows() > 0) WeightMatrixAccess::pack(w, *k->packed, tensor, file, arena);
    return w;
}

std::size_t matmul_scratch_bytes(const WeightMatrix& w, std::int64_t n_tokens) {
    if (n_tokens <= 0 || w.n_cols() == 0) return 0;
    const TypeKernels& k = kernels_for(w, Isa::scalar);
    const std::size_t a_row = row_bytes_of(k.act_type, w.n_cols());
    const std::size_t a_stride = (a_row + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
    std::size_t aux = 0;  // packed: block-major int8 activations, float da and int32 bias words
    if (w.packed()) {
        const PackedLayout& p = *k.packed;
        const auto n_blk = static_cast<std::size_t>(n_tokens * (w.n_cols() / p.block_values));
        aux = static_cast<std::size_t>(n_tokens * w.n_cols()) + n_blk * (4 + 4 * static_cast<std::size_t>(p.bias_words)) +
              2 * kScratchAlign;
    }
    return a_stride * static_cast<std::size_t>(n_tokens) + kScratchAlign + aux;
}

namespace {

// Packed path: activations to Q8_0 plus per-block da / bias, then row groups over threads.
// Packed path for up to kMaxJobs matrices of one type and row length sharing the input x: the
// activations are prepared once, then all their row groups are split over the threads in one
// loop (up to kRunTokens tokens: parallel_runs; more: plan_chunks).
constexpr int kMaxJobs = 4;

// A chunk of job `job`'s row groups [g0, g1).
struct GroupChunk {
    int job;
    std::int64_t g0, g1;
};
constexpr int kMaxChunks = 256;

// Tokens a thread prepares at a time: one 64-byte line of a block's 4-byte scales (or bias
// words), which are block-major (entry b * n_tokens + t). With a token each, two threads wrote
// the same lines block after block: 5-6% of TinyLlama Q4_0 `--parallel 8` samples, against 1.8%
// on one thread; `--parallel 2 / 4 / 8` ran +9 / +8 / +6% faster (medians of 4 rounds).
constexpr std::int64_t kPrepareTokenGrain = 16;

// Products of up to this many tokens (decode, and a few sequences decoding together, which read
// the weights about once), packed or float, split their groups by parallel_runs; larger ones by
// plan_chunks (packed: 16-64 tokens measured within +-1.6% either way, pp512 even).
constexpr std::int64_t kRunTokens = 8;

// The split of batches of more than kRunTokens tokens: the jobs' groups, in order, in chunks that
// shrink toward the end (guided scheduling): each takes 1/(2 * workers) of the groups left,
// rounded up to a multiple of `quantum` (2), never fewer than min_size, never across jobs. The
// last chunks are then `quantum` groups, so the workers finish within about that of each other
// (equal chunks of 1/16 of a matrix left one idle for half a chunk on average). Returns the count.
int plan_chunks(const std::int64_t* n_groups, int n_jobs, int workers, GroupChunk* out) {
    constexpr std::int64_t quantum = 2;
    std::int64_t total = 0;
    for (int j = 0; j < n_jobs; ++j) total += n_groups[j];
    for (std::int64_t min_size = quantum;; min_size *= 2) {  // larger minimums until kMaxChunks suffice
        int n = 0;
        std::int64_t left = total;
        for (int j = 0; j < n_jobs && n <= kMaxChunks; ++j) {
            for (std::int64_t g = 0; g < n_groups[j] && n <= kMaxChunks; ++n) {
                std::int64_t size = std::max(min_size, left / (2 * std::int64_t{workers}));
                size = std::min((size + quantum - 1) / quantum * quantum, n_groups[j] - g);
                if (n < kMaxChunks) out[n] = {j, g, g + size};
                g += size;
                left -= size;
            }
        }
        if (n <= kMaxChunks) return n;
    }
}

// One weight type's activations in a packed product: its kernels and where its prepared
// activations lie (a region of matmul_scratch_bytes of a matrix of its type).
struct PackedAct {
    const TypeKernels* k = nullptr;
    std::int64_t nb = 0;  // activation blocks a row
    std::int8_t* qa = nullptr;
    float* ad = nullptr;
    std::int32_t* ab = nullptr;
    std::uint8_t* act = nullptr;  // the act_type rows, a_stride apart
    std::size_t a_stride = 0;
};

PackedAct carve_packed_act(const TypeKernels& k, std::int64_t n, std::int64_t n_tokens, std::byte* region) {
    const PackedLayout& pl = *k.packed;
    PackedAct a;
    a.k = &k;
    a.nb = n / pl.block_values;
    const std::size_t a_row = row_bytes_of(k.act_type, n);
    a.a_stride = (a_row + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
    const auto base = reinterpret_cast<std::uintptr_t>(region);
    a.act = reinterpret_cast<std::uint8_t*>((base + kScratchAlign - 1) / kScratchAlign * kScratchAlign);
    a.qa = reinterpret_cast<std::int8_t*>(a.act + a.a_stride * static_cast<std::size_t>(n_tokens));
    const auto qa_bytes = static_cast<std::size_t>(n_tokens * n);
    a.ad = reinterpret_cast<float*>(a.qa + (qa_bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign);
    a.ab = reinterpret_cast<std::int32_t*>(a.ad + static_cast<std::size_t>(n_tokens * a.nb));
    return a;
}

// Packed path for up to kMaxJobs packed matrices of one row length sharing the input x (e.g.
// q/k/v, of one type or of several: Q4_K_M's attn_v is Q6_K in some layers): the activations
// are prepared once per type, each in its own region of `scratch` (matmul_scratch_bytes of a
// matrix of that type, one after another), then all the row groups are split over the threads
// in one loop (up to kRunTokens tokens: parallel_runs; more: plan_chunks).
void matmul_packed(const MatmulJob* jobs, int n_jobs, Isa isa, const float* x, std::int64_t n_tokens,
                   std::span<std::byte> scratch, int n_threads) {
    const std::int64_t n = jobs[0].w->n_cols();
    PackedAct acts[kMaxJobs];
    int act_of[kMaxJobs], n_acts = 0;
    std::size_t used = 0;
    for (int j = 0; j < n_jobs; ++j) {
        const TypeKernels& k = kernels_for(*jobs[j].w, isa);
        EMBER_ASSERT(k.packed != nullptr && k.packed_gemm != nullptr);
        int a = 0;
        while (a < n_acts && acts[a].k != &k) ++a;
        if (a == n_acts) {
            const std::size_t bytes = matmul_scratch_bytes(*jobs[j].w, n_tokens);
            EMBER_ASSERT(used + bytes <= scratch.size());
            acts[n_acts++] = carve_packed_act(k, n, n_tokens, scratch.data() + used);
            used += bytes;
        }
        act_of[j] = a;
    }
    // Batches of up to kPrepareTokenGrain tokens prepare on one thread.
    parallel_for(n_tokens, n_threads, kPrepareTokenGrain, [&](std::int64_t t0, std::int64_t t1, int) {
        for (int a = 0; a < n_acts; ++a) {
            const PackedAct& p = acts[a];
            for (std::int64_t t = t0; t < t1; ++t) {
                std::uint8_t* at = p.act + static_cast<std::size_t>(t) * p.a_stride;
                p.k->quantize_act(x + t * n, at, n);
                p.k->packed->prepare_act(at, t, n_tokens, n, p.qa, p.ad, p.ab);
            }
        }
    });
    // The row groups, split dynamically (both splits below), so a worker that the OS deschedules
    // (shared or oversubscribed cores) does not hold up the others: they take over its groups
    // and only wait for it at the closing barrier.
    std::int64_t n_groups[kMaxJobs], max_groups = 0, quantum = 1;
    for (int j = 0; j < n_jobs; ++j) {
        n_groups[j] = (jobs[j].w->n_rows() + kPackRows - 1) / kPackRows;
        max_groups = std::max(max_groups, n_groups[j]);
        quantum = std::max<std::int64_t>(quantum, acts[act_of[j]].k->decode_groups);
    }
    const int workers = static_cast<int>(std::min<std::int64_t>(std::max(n_threads, 1), max_groups * n_jobs));
    const auto run = [&](int j, std::int64_t g0, std::int64_t g1, std::int64_t n_after) {
        const MatmulJob& job = jobs[j];
        const PackedAct& p = acts[act_of[j]];
        const std::size_t gb = job.w->group_bytes();
        p.k->packed_gemm(p.nb, job.w->data() + static_cast<std::size_t>(g0) * gb, gb, g1 - g0,
                         job.w->n_rows() - g0 * kPackRows, p.qa, p.ad, p.ab, n_tokens, job.y + g0 * kPackRows,
                         job.ldy, n_after);
    };
    if (n_tokens <= kRunTokens) {
        // A lone worker takes each job whole: there is nothing to balance, and every start costs
        // a ramp of reads not prefetched. Several take runs of their own contiguous ranges
        // (parallel_runs), their kernels' prefetches handed on from run to run: against
        // prefill's guided chunks, which decode took before, TinyLlama on 2 threads, time a token
        // -1 to -4% by type; batches of 2-8 tokens, median +1.7% over 14 types and sizes
        // (-1.7% to +3.9%; docs/performance.md).
        if (workers == 1) {
            for (int j = 0; j < n_jobs; ++j) run(j, 0, n_groups[j], 0);
        } else {
            parallel_runs(n_groups, n_jobs, workers, quantum,
                          [&](const JobRun& r) { run(r.job, r.begin, r.end, r.n_after); });
        }
        return;
    }
    // Larger batches: guided chunks, claimed one at a time from a shared counter.
    GroupChunk chunks[kMaxChunks];
    const int n_chunks = plan_chunks(n_groups, n_jobs, workers, chunks);
    std::atomic<int> next{0};
    parallel_for(workers, workers, 1, [&](std::int64_t, std::int64_t, int) {
        for (int c = next.fetch_add(1, std::memory_order_relaxed); c < n_chunks;
             c = next.fetch_add(1, std::memory_order_relaxed)) {
            run(chunks[c].job, chunks[c].g0, chunks[c].g1, 0);
        }
    });
}

}  // namespace

void matmul(const WeightMatrix& w, const float* x, std::int64_t n_tokens, float* y,
            std::int64_t ldy, std::span<std::byte> scratch, int n_threads) {
    matmul(w, x, n_tokens, y, ldy, scratch, n_threads, active_isa());
}

void matmul(const WeightMatrix& w, const float* x, std::int64_t n_tokens, float* y,
            std::int64_t ldy, std::span<std::byte> scratch, int n_threads, Isa isa) {
    if (n_tokens <= 0 || w.n_rows() <= 0) return;
    const TypeKernels& k = kernels_for(w, isa);
    const std::int64_t n = w.n_cols();
    if (n == 0) {
        for (std::int64_t t = 0; t < n_tokens; ++t) std::fill_n(y + t * ldy, w.n_rows(), 0.0f);
        return;
    }
    EMBER_ASSERT(scratch.size() >= matmul_scratch_bytes(w, n_tokens));
    if (w.packed()) {
        const MatmulJob job{&w, y, ldy};
        matmul_packed(&job, 1, isa, x, n_tokens, scratch, n_threads);
        return;
    }
    const std::size_t a_row = row_bytes_of(k.act_type, n);
    const std::size_t a_stride = (a_row + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
    auto base = reinterpret_cast<std::uintptr_t>(scratch.data());
    auto* act = reinterpret_cast<std::uint8_t*>((base + kScratchAlign - 1) / kScratchAlign * kScratchAlign);

    // 1. Activations into the weight type's partner format.
    parallel_for(n_tokens, n_threads, 1, [&](std::int64_t t0, std::int64_t t1, int) {
        for (std::int64_t t = t0; t < t1; ++t) k.quantize_act(x + t * n, act + t * a_stride, n);
    });

    // 2. Rows split over threads; each thread takes its chunk's row blocks past one block of
    //    tokens at a time, whose activations stay in L2 (512 KiB of F32 at 2048 columns) while
    //    the rows stream by: a quarter of the bytes (F32) to an eighth (F16) that rows outside
    //    and tokens inside moved, which read every token's activations again for each 16 rows
    //    from beyond L2 (2 threads, 512 tokens: F16 GEMM +4-6%, BF16 +2-7%, F32 within noise).
    //    Decode: each row streamed once either way.
    const std::uint8_t* wd = w.data();
    const std::size_t w_stride = w.row_bytes();
    const auto sweep = [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t tb = 0; tb < n_tokens; tb += kTokenBlock) {
            const std::int64_t te = std::min(n_tokens, tb + kTokenBlock);
            for (std::int64_t rb = r0; rb < r1; rb += kRowGrain) {
                const std::int64_t re = std::min(r1, rb + kRowGrain);
                if (k.tile != nullptr) {
                    k.tile(n, wd + rb * w_stride, w_stride, re - rb, act + tb * a_stride, a_stride,
                           te - tb, y + tb * ldy + rb, ldy);
                    continue;
                }
                for (std::int64_t t = tb; t < te; ++t) {
                    for (std::int64_t r = rb; r < re; ++r) {
                        y[t * ldy + r] = k.vec_dot(n, wd + r * w_stride, act + t * a_stride);
                    }
                }
            }
        }
    };
    const std::int64_t n_groups = (w.n_rows() + kRowGrain - 1) / kRowGrain;
    const int workers = static_cast<int>(std::min<std::int64_t>(std::max(n_threads, 1), n_groups));
    if (n_tokens <= kRunTokens) {
        // Decode and small batches: a contiguous range of rows a thread (parallel_runs), so the
        // tiles' prefetches past the end of a run fall on the rows the same thread reads next.
        // Against the pool's equal chunks, tokens alternating in one session, TinyLlama on 2
        // threads: F16 -4.1%, BF16 -3.8% a token (163 and 159 of 200 pairs won). Against guided
        // chunks, `--parallel 2 / 4 / 8`: F16 +1.0 / +1.9 / +5.5%, BF16 +2.3 / +8.8 / -0.2%.
        parallel_runs(&n_groups, 1, workers, 1,
                      [&](const JobRun& r) { sweep(r.begin * kRowGrain, std::min(w.n_rows(), r.end * kRowGrain)); });
        return;
    }
    // Larger batches claim 16-row groups in guided chunks (plan_chunks), as the packed path
    // does: the pool's equal chunks (4 a worker) left one worker idle for about half a chunk at
    // the end.
    GroupChunk chunks[kMaxChunks];
    const int n_chunks = plan_chunks(&n_groups, 1, workers, chunks);
    std::atomic<int> next{0};
    parallel_for(workers, workers, 1, [&](std::int64_t, std::int64_t, int) {
        for (int c = next.fetch_add(1, std::memory_order_relaxed); c < n_chunks;
             c = next.fetch_add(1, std::memory_order_relaxed)) {
            sweep(chunks[c].g0 * kRowGrain, std::min(w.n_rows(), chunks[c].g1 * kRowGrain));
        }
    });
}

std::size_t matmul_many_scratch_bytes(std::span<const WeightMatrix* const> ws, std::int64_t n_tokens) {
    std::size_t largest = 0, by_type = 0;
    for (std::size_t j = 0; j < ws.size(); ++j) {
        const std::size_t bytes = matmul_scratch_bytes(*ws[j], n_tokens);
        largest = std::max(largest, bytes);
        bool seen = false;  // a type's activations are prepared once
        for (std::size_t i = 0; i < j && !seen; ++i) seen = ws[i]->type() == ws[j]->type();
        if (!seen) by_type += bytes;
    }
    return std::max(largest, by_type);
}

void matmul_many(std::span<const MatmulJob> jobs, const float* x, std::int64_t n_tokens,
                 std::span<std::byte> scratch, int n_threads) {
    // One product where every matrix is packed with the same row length and the scratch holds
    // each type's activations (matmul_many_scratch_bytes); else one product a matrix.
    bool fuse = jobs.size() > 1 && jobs.size() <= kMaxJobs && n_tokens > 0;
    const WeightMatrix* ws[kMaxJobs] = {};
    for (std::size_t j = 0; j < jobs.size() && fuse; ++j) {
        ws[j] = jobs[j].w;
        fuse = ws[j]->packed() && ws[j]->n_rows() > 0 && ws[j]->n_cols() == jobs[0].w->n_cols();
    }
    fuse = fuse && scratch.size() >= matmul_many_scratch_bytes({ws, jobs.size()}, n_tokens);
    if (!fuse) {
        for (const MatmulJob& j : jobs) matmul(*j.w, x, n_tokens, j.y, j.ldy, scratch, n_threads);
        return;
    }
    matmul_packed(jobs.data(), static_cast<int>(jobs.size()), active_isa(), x, n_tokens, scratch, n_threads);
}

void dequantize_row(const gguf::TensorInfo& tensor, std::int64_t row, float* dst) {
    const TypeKernels* k = type_kernels(tensor.type, Isa::scalar);
    if (k == nullptr) fail(tensor_label(tensor) + ": cannot dequantize this type");
    if (row < 0 || row >= tensor.n_rows()) {
        fail(tensor_label(tensor) + ": row " + std::to_string(row) + " out of range (" +
             std::to_string(tensor.n_rows()) + " rows)");
    }
    const auto traits = tensor_type_traits(static_cast<std::uint32_t>(tensor.type));
    if (tensor.ne[0] % traits->block_size != 0) {
        fail(tensor_label(tensor) + ": row length is not a multiple of the block size");
    }
    const std::size_t row_bytes = row_bytes_of(tensor.type, tensor.ne[0]);
    k->dequantize(tensor.data + static_cast<std::size_t>(row) * row_bytes, dst, tensor.ne[0]);
}

}  // namespace ember::kernels

// Model::estimate_memory: weights, KV cache per token and session buffers from the GGUF header.
#include <algorithm>
#include <limits>
#include <string>

#include "api/model_impl.hpp"
#include "ember/session.hpp"
#include "runtime/fail.hpp"
#include "runtime/memory.hpp"
#include "runtime/parallel.hpp"

namespace ember {
namespace {

MemoryEstimate estimate(const gguf::File& file, const model::ModelConfig& c, std::int64_t n_vocab,
                        const SessionOptions& o) {
    if (o.context < 0) fail("SessionOptions::context must be >= 0, got " + std::to_string(o.context));
    if (o.threads < 0) fail("SessionOptions::threads must be >= 0, got " + std::to_string(o.threads));
    if (o.batch <= 0) fail("SessionOptions::batch must be > 0, got " + std::to_string(o.batch));
    MemoryEstimate e;
    for (const auto& t : file.tensors()) e.weight_bytes += static_cast<std::int64_t>(t.n_bytes);
    // A key and a value row per layer and token (sliding-window layers hold fewer tokens: an
    // upper bound for those models).
    const std::int64_t rows = 2 * c.n_layer;
    const std::int64_t q8_blocks = (c.n_embd_kv() + 31) / 32;
    e.kv_bytes_per_token_f32 = rows * c.n_embd_kv() * 4;
    e.kv_bytes_per_token_f16 = rows * c.n_embd_kv() * 2;
    e.kv_bytes_per_token_q8_0 = rows * q8_blocks * 34;  // 32 int8 and one f16 scale per block
    // As Session sizes itself (src/api/session.cpp).
    const std::int64_t n_ctx = o.context > 0 ? o.context : std::min<std::int64_t>(c.n_ctx_train, 4096);
    const std::int64_t n_batch = std::min<std::int64_t>(o.batch, n_ctx);
    const int n_threads = resolve_threads(o.threads);
    e.context = n_ctx;
    e.scratch_bytes = model::ForwardScratch::estimate_bytes(c, n_vocab, n_batch, n_ctx, o.logits_all ? n_batch : 1,
                                                            n_threads) +
                      (n_vocab + 2 * c.n_rot()) * 4 + n_ctx * 4 +  // logits, RoPE, tokens
                      65536;  // the session object, its text stream, small vectors
    // Saturating at INT64_MAX: the header is not trusted, and its largest dimensions times a
    // large context pass 2^63 (2^24 layers of 2^24-wide keys: 2^51 bytes a token).
    const auto u = size_or_zero;
    const auto clamped = [](std::uint64_t v) {
        return static_cast<std::int64_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::int64_t>::max()));
    };
    e.session_bytes = clamped(saturating_add(saturating_mul(u(e.kv_bytes_per_token_f32), u(n_ctx)), u(e.scratch_bytes)));
    e.total_bytes = clamped(saturating_add(u(e.weight_bytes), u(e.session_bytes)));
    return e;
}

}  // namespace

MemoryEstimate Model::estimate_memory(const std::string& path) { return estimate_memory(path, SessionOptions{}); }

MemoryEstimate Model::estimate_memory(const std::string& path, const SessionOptions& session) {
    const gguf::File file = gguf::File::open(path);
    const model::ModelConfig config = model::ModelConfig::from_gguf(file);
    return estimate(file, config, config.n_vocab, session);
}

}  // namespace ember

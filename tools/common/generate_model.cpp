#include "common/generate_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/stream_writer.hpp"
#include "ember/text.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"
#include "runtime/fail.hpp"
#include "runtime/file_io.hpp"
#include "runtime/memory.hpp"
#include "runtime/parallel.hpp"

namespace ember::tools {
namespace {

constexpr std::int64_t kFillChunkElements = std::int64_t{1} << 22;

std::uint64_t splitmix64(std::uint64_t& s) {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

std::uint64_t hash_name(std::string_view s) {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h;
}

// One row of normal(0, stddev) values, determined by (seed, tensor name, row) only, so the
// output does not depend on the thread count.
void random_row(std::uint64_t seed, std::uint64_t name_hash, std::int64_t row, float stddev, float* x,
                std::int64_t n) {
    std::uint64_t s = seed ^ name_hash ^ (static_cast<std::uint64_t>(row) * 0xD1B54A32D192ED03ull);
    constexpr float kTwoPi = 6.28318530717958647692f;
    for (std::int64_t i = 0; i < n; i += 2) {
        const std::uint64_t r = splitmix64(s);
        const float u1 = (static_cast<float>(r >> 40) + 1.0f) * (1.0f / 16777216.0f);  // (0, 1]
        const float u2 = static_cast<float>((r >> 16) & 0xFFFFFF) * (1.0f / 16777216.0f);
        const float mag = stddev * std::sqrt(-2.0f * std::log(u1));
        x[i] = mag * std::cos(kTwoPi * u2);
        if (i + 1 < n) x[i + 1] = mag * std::sin(kTwoPi * u2);
    }
}

struct TensorSpec {
    std::string name;
    std::vector<std::int64_t> dims;
    bool is_norm = false;
};

// A SentencePiece-style vocabulary: <unk>, <s>, </s>, the 256 byte tokens, then pieces
// (characters, "▁"-prefixed characters, letter pairs, ...) with decreasing scores.
void synthetic_vocab(std::int64_t n_vocab, StreamWriter& w) {
    if (n_vocab < 259 + 64) fail("a synthetic vocabulary needs at least 323 tokens, got " + std::to_string(n_vocab));
    // About twice n_vocab short strings are built, then the metadata arrays.
    check_memory(saturating_mul(static_cast<std::uint64_t>(n_vocab), 256),
                 "a synthetic vocabulary of " + std::to_string(n_vocab) + " tokens");
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
    std::vector<std::int32_t> types = {2, 3, 3};
    char buf[8];
    for (int b = 0; b < 256; ++b) {
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        tokens.emplace_back(buf);
        types.push_back(6);
    }
    const std::string space = "\xE2\x96\x81";  // U+2581
    std::vector<std::string> alphabet;
    for (char c = 'a'; c <= 'z'; ++c) alphabet.emplace_back(1, c);
    for (char c = 'A'; c <= 'Z'; ++c) alphabet.emplace_back(1, c);
    for (char c = '0'; c <= '9'; ++c) alphabet.emplace_back(1, c);
    for (char c : std::string(".,!?'\"-:;()")) alphabet.emplace_back(1, c);
    std::set<std::string> seen(tokens.begin(), tokens.end());
    std::vector<std::string> pieces = {space};
    for (const auto& a : alphabet) pieces.push_back(a);
    for (const auto& a : alphabet) pieces.push_back(space + a);
    // Lowercase n-grams, with and without the word-start mark, until the vocabulary is full.
    std::vector<std::string> level(alphabet.begin(), alphabet.begin() + 26);
    const auto enough = [&] { return static_cast<std::int64_t>(tokens.size() + pieces.size()) >= n_vocab * 2; };
    while (!enough()) {
        std::vector<std::string> next;
        for (std::size_t i = 0; i < level.size() && !enough(); ++i) {
            for (char c = 'a'; c <= 'z'; ++c) {
                next.push_back(level[i] + c);
                pieces.push_back(next.back());
                pieces.push_back(space + next.back());
            }
        }
        level.swap(next);
    }
    for (const auto& p : pieces) {
        if (static_cast<std::int64_t>(tokens.size()) >= n_vocab) break;
        if (seen.insert(p).second) {
            tokens.push_back(p);
            types.push_back(1);
        }
    }
    std::vector<float> scores(tokens.size(), 0.0f);
    for (std::size_t i = 259; i < tokens.size(); ++i) scores[i] = -static_cast<float>(i - 259);
    w.set("tokenizer.ggml.model", gguf::MetaValue::string("llama"));
    w.set("tokenizer.ggml.tokens", gguf::MetaValue::strings(tokens));
    w.set("tokenizer.ggml.scores", gguf::MetaValue::f32s(scores));
    w.set("tokenizer.ggml.token_type", gguf::MetaValue::i32s(types));
    w.set("tokenizer.ggml.unknown_token_id", gguf::MetaValue::u32(0));
    w.set("tokenizer.ggml.bos_token_id", gguf::MetaValue::u32(1));
    w.set("tokenizer.ggml.eos_token_id", gguf::MetaValue::u32(2));
    w.set("tokenizer.ggml.add_bos_token", gguf::MetaValue::boolean(true));
    w.set("tokenizer.ggml.add_eos_token", gguf::MetaValue::boolean(false));
}

}  // namespace

bool preset_shape(std::string_view name, ModelShape& s) {
    if (name == "tinyllama") {
        s = {.n_embd = 2048, .n_layer = 22, .n_head = 32, .n_head_kv = 4, .n_ff = 5632, .n_vocab = 32000, .n_ctx = 2048};
    } else if (name == "7b") {
        s = {.n_embd = 4096, .n_layer = 32, .n_head = 32, .n_head_kv = 32, .n_ff = 11008, .n_vocab = 32000, .n_ctx = 4096};
    } else if (name == "tiny") {
        s = ModelShape{};
    } else {
        return false;
    }
    return true;
}

void generate_model(const GenerateOptions& o, const std::string& out_path) {
    const ModelShape& s = o.shape;
    if (s.n_embd <= 0 || s.n_layer <= 0 || s.n_head <= 0 || s.n_head_kv <= 0 || s.n_ff <= 0 || s.n_ctx <= 0) {
        fail("generate_model: every dimension must be positive");
    }
    if (s.n_embd % s.n_head != 0) fail("generate_model: n_embd must be a multiple of n_head");
    if (s.n_head % s.n_head_kv != 0) fail("generate_model: n_head must be a multiple of n_head_kv");
    const std::int64_t head_dim = s.n_embd / s.n_head;
    if (head_dim % 2 != 0) fail("generate_model: the head size must be even (RoPE)");
    static const FileType kF16{"F16", 1, TensorType::F16};
    const FileType& type = o.type != nullptr ? *o.type : kF16;

    std::int64_t n_vocab = s.n_vocab;
    std::optional<gguf::File> vocab_file;
    if (!o.vocab_from.empty()) {
        vocab_file.emplace(gguf::File::open(o.vocab_from));
        n_vocab = static_cast<std::int64_t>(vocab_file->get_array("tokenizer.ggml.tokens").items.size());
    }

    // The tensors first: the file's size is checked against the disk before anything is built.
    StreamWriter w;
    std::vector<TensorSpec> specs;
    const std::int64_t n_q = s.n_head * head_dim, n_kv = s.n_head_kv * head_dim;
    specs.push_back({"token_embd.weight", {s.n_embd, n_vocab}});
    specs.push_back({"output_norm.weight", {s.n_embd}, true});
    specs.push_back({"output.weight", {s.n_embd, n_vocab}});
    for (std::int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        specs.push_back({p + "attn_norm.weight", {s.n_embd}, true});
        specs.push_back({p + "attn_q.weight", {s.n_embd, n_q}});
        specs.push_back({p + "attn_k.weight", {s.n_embd, n_kv}});
        specs.push_back({p + "attn_v.weight", {s.n_embd, n_kv}});
        specs.push_back({p + "attn_output.weight", {n_q, s.n_embd}});
        specs.push_back({p + "ffn_norm.weight", {s.n_embd}, true});
        specs.push_back({p + "ffn_gate.weight", {s.n_embd, s.n_ff}});
        specs.push_back({p + "ffn_up.weight", {s.n_embd, s.n_ff}});
        specs.push_back({p + "ffn_down.weight", {s.n_ff, s.n_embd}});
    }
    std::vector<std::string> names;
    for (const auto& t : specs) names.push_back(t.name);
    const std::vector<std::size_t> order = llama_tensor_order(names);

    TypeChooser chooser(type, static_cast<int>(s.n_layer), static_cast<int>(s.n_layer), true);
    std::vector<TensorType> types(specs.size(), TensorType::F32);
    for (std::size_t i : order) {
        const auto& t = specs[i];
        if (is_quantizable(t.name, static_cast<std::uint32_t>(t.dims.size()))) types[i] = chooser.choose(t.name, t.dims[0]);
        w.add_tensor(t.name, types[i], t.dims);
    }
    check_output_target(out_path);
    const std::uint64_t file_bytes = w.file_bytes(), free = free_disk_bytes(out_path);
    if (file_bytes > free) {
        fail(out_path + ": the model needs " + format_bytes(file_bytes) + ", more than the " + format_bytes(free) +
             " free on its file system");
    }
    // One chunk of rows as floats and as the output type (at least one row).
    const std::int64_t widest = std::max({s.n_embd, s.n_ff, n_q});
    check_memory(saturating_mul(static_cast<std::uint64_t>(std::max(kFillChunkElements, widest)), 8),
                 out_path + ": the conversion buffers");

    w.set("general.architecture", gguf::MetaValue::string("llama"));
    w.set("general.name", gguf::MetaValue::string(o.name));
    if (vocab_file) {
        for (const gguf::KeyValue& kv : vocab_file->metadata()) {
            if (kv.key.rfind("tokenizer.", 0) == 0) w.set(kv.key, gguf::MetaValue::from(kv.value));
        }
    }
    w.set("llama.vocab_size", gguf::MetaValue::u32(static_cast<std::uint32_t>(n_vocab)));
    w.set("llama.context_length", gguf::MetaValue::u32(static_cast<std::uint32_t>(s.n_ctx)));
    w.set("llama.embedding_length", gguf::MetaValue::u32(static_cast<std::uint32_t>(s.n_embd)));
    w.set("llama.feed_forward_length", gguf::MetaValue::u32(static_cast<std::uint32_t>(s.n_ff)));
    w.set("llama.block_count", gguf::MetaValue::u32(static_cast<std::uint32_t>(s.n_layer)));
    w.set("llama.attention.head_count", gguf::MetaValue::u32(static_cast<std::uint32_t>(s.n_head)));
    w.set("llama.attention.head_count_kv", gguf::MetaValue::u32(static_cast<std::uint32_t>(s.n_head_kv)));
    w.set("llama.rope.dimension_count", gguf::MetaValue::u32(static_cast<std::uint32_t>(head_dim)));
    w.set("llama.rope.freq_base", gguf::MetaValue::f32(10000.0f));
    w.set("llama.attention.layer_norm_rms_epsilon", gguf::MetaValue::f32(1e-5f));
    w.set("general.file_type", gguf::MetaValue::u32(type.ftype));
    w.set("general.quantization_version", gguf::MetaValue::u32(2));
    if (!vocab_file) synthetic_vocab(n_vocab, w);

    const int n_threads = resolve_threads(o.threads);
    check_threads(n_threads, "threads");
    std::uint64_t total = 0;
    w.begin(out_path);
    std::vector<float> f32;
    std::vector<std::uint8_t> q;
    int idx = 0;
    for (std::size_t i : order) {
        const auto& t = specs[i];
        const std::int64_t n_cols = t.dims[0];
        const std::int64_t n_rows = t.dims.size() > 1 ? t.dims[1] : 1;
        const std::uint64_t rb = row_bytes(types[i], n_cols);
        // Echo: the output matrix is the embedding scaled; the layers are nearly silent.
        const bool echo_output = o.echo && t.name == "output.weight";
        const std::uint64_t name_hash = hash_name(echo_output ? std::string("token_embd.weight") : t.name);
        const float stddev = o.echo && t.name.rfind("blk.", 0) == 0 ? kEchoLayerStd : o.stddev;
        const float scale = echo_output ? kEchoOutputScale : 1.0f;
        const std::int64_t rows_per_chunk = std::max<std::int64_t>(1, kFillChunkElements / n_cols);
        for (std::int64_t r0 = 0; r0 < n_rows; r0 += rows_per_chunk) {
            const std::int64_t nr = std::min(rows_per_chunk, n_rows - r0);
            f32.resize(static_cast<std::size_t>(nr * n_cols));
            q.resize(static_cast<std::size_t>(nr) * rb);
            parallel_for(nr, n_threads, 1, [&](std::int64_t b, std::int64_t e, int) {
                for (std::int64_t r = b; r < e; ++r) {
                    float* x = f32.data() + r * n_cols;
                    if (t.is_norm) {
                        std::fill(x, x + n_cols, 1.0f);
                    } else {
                        random_row(o.seed, name_hash, r0 + r, stddev, x, n_cols);
                        if (scale != 1.0f) {
                            for (std::int64_t i = 0; i < n_cols; ++i) x[i] *= scale;
                        }
                    }
                }
                quantize_rows(types[i], f32.data() + b * n_cols, q.data() + static_cast<std::uint64_t>(b) * rb,
                              e - b, n_cols);
            });
            w.write(q.data(), q.size());
        }
        total += rb * static_cast<std::uint64_t>(n_rows);
        ++idx;
        if (o.verbose) {
            std::fprintf(stderr, "[%4d/%4zu] %-28s %-5s %9.2f MiB\n", idx, order.size(), t.name.c_str(),
                         std::string(tensor_type_name(types[i])).c_str(),
                         static_cast<double>(rb * static_cast<std::uint64_t>(n_rows)) / (1 << 20));
        }
    }
    w.finish();
    if (o.verbose) {
        std::fprintf(stderr, "%s: %zu tensors, %s, %.2f MiB of weights\n", printable(out_path).c_str(), specs.size(),
                     std::string(type.name).c_str(), static_cast<double>(total) / (1 << 20));
    }
}

}  // namespace ember::tools

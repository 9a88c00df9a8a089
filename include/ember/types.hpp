// ember/types.hpp: small value types shared by the public API.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace ember {

/// A token id: an index into the model's vocabulary, 0 <= id < Model::n_vocab().
using Token = std::int32_t;

/// Most worker threads ModelOptions::threads and SessionOptions::threads accept (more throws
/// ember::Error, as does a count whose thread stacks do not fit under the address-space limit).
inline constexpr int kMaxThreads = 1024;

/// How a KV cache stores keys and values (SessionOptions::kv_type, EngineOptions::kv_type):
/// 32-bit floats, 16-bit floats (half the memory), or Q8_0 (blocks of 32 int8 values with an
/// fp16 scale, 34 bytes per 32 values: about a quarter; needs a head dimension that is a
/// multiple of 32). Attention reads them as they are stored.
enum class KvType { f32, f16, q8_0 };

/// Options for Model::load.
struct ModelOptions {
    /// Worker threads used by sessions that do not set their own, 0..kMaxThreads (0: all
    /// hardware threads).
    int threads = 0;
    /// Called during loading with the fraction done (0 to 1), e.g. for a progress bar.
    std::function<void(float)> on_progress{};
    /// Map the file into memory (pages are read on first use and shared with the page cache).
    /// false: read it into memory of the model's own at load (on all threads), as llama.cpp's
    /// --no-mmap; for file systems where mapping is slow, or to read the whole file up front.
    bool use_mmap = true;
    /// Lock the weights into RAM (mlock) so that the OS never pages them out, as llama.cpp's
    /// --mlock. Model::load throws ember::Error naming the limit when RLIMIT_MEMLOCK is too low.
    bool mlock = false;
};

/// Options for Model::tokenize.
struct TokenizeOptions {
    /// Prepend the BOS token when the vocabulary has one and asks for it
    /// (`tokenizer.ggml.add_bos_token`, true by default for SPM vocabularies).
    bool add_bos = true;
    /// Match control and user-defined tokens written in the text (e.g. "<|im_start|>") as whole
    /// tokens. When false they are tokenized as plain text.
    bool parse_special = false;
};

/// What a model is, read from its GGUF metadata.
struct ModelInfo {
    std::string name{};        ///< general.name, or the file name.
    std::string architecture{};  ///< general.architecture, e.g. "llama".
    std::int64_t n_vocab = 0;        ///< Tokens in the vocabulary.
    std::int64_t n_ctx_train = 0;    ///< Context length the model was trained with.
    std::int64_t n_embd = 0;         ///< Width of the residual stream.
    std::int64_t n_layer = 0;        ///< Transformer blocks.
    std::int64_t n_head = 0;         ///< Query heads.
    std::int64_t n_head_kv = 0;      ///< Key/value heads (grouped-query attention when < n_head).
    std::int64_t n_ff = 0;           ///< Feed-forward width.
    std::int64_t n_params = 0;       ///< Parameters in all weight tensors.
    std::int64_t weight_bytes = 0;   ///< Bytes of all weight tensors as stored in the file.
    std::string file_type{};         ///< Dominant weight type, e.g. "F32", "Q4_0".
};

}  // namespace ember

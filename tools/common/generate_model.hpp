// ember-generate-model's work as a function: a llama-architecture GGUF with random weights
// (seeded, normal with a small standard deviation so activations stay finite), complete
// metadata, and a tokenizer copied from another GGUF or a synthetic SPM vocabulary.
#pragma once

#include <cstdint>
#include <string>

#include "common/quant_mix.hpp"

namespace ember::tools {

struct ModelShape {
    std::int64_t n_embd = 256, n_layer = 2, n_head = 4, n_head_kv = 4, n_ff = 512;
    std::int64_t n_vocab = 512, n_ctx = 2048;
};

/// Named shapes: "tinyllama" (TinyLlama 1.1B), "7b" (Llama 2 7B), "tiny" (a test model).
/// Returns false for an unknown name.
bool preset_shape(std::string_view name, ModelShape& shape);

struct GenerateOptions {
    ModelShape shape;
    const FileType* type = nullptr;  ///< nullptr: F16.
    std::uint64_t seed = 42;
    float stddev = 0.02f;            ///< Of the matrix weights; norm weights are 1.
    std::string vocab_from;          ///< GGUF whose tokenizer.* metadata is copied ("" = synthetic).
    std::string name = "ember random llama";
    int threads = 0;
    bool verbose = true;
    /// An "echo" model for speculative-decoding benchmarks: layer weights of standard deviation
    /// kEchoLayerStd and output.weight = token_embd.weight x kEchoOutputScale, so the model
    /// repeats its last token by a wide margin; its quantizations and copies with fewer layers
    /// (same seed and shape otherwise, so the same embeddings) agree with it token for token.
    bool echo = false;
};

inline constexpr float kEchoLayerStd = 0.002f;
inline constexpr float kEchoOutputScale = 50.0f;

/// Writes the model to `out_path`, streaming tensor data row chunk by row chunk.
/// Throws ember::Error for inconsistent shapes or I/O errors.
void generate_model(const GenerateOptions& options, const std::string& out_path);

}  // namespace ember::tools

// ember-quantize's work as a function (the tool's main and the tests call it).
#pragma once

#include <string>

#include "common/quant_mix.hpp"

namespace ember::tools {

struct QuantizeOptions {
    int threads = 0;      ///< 0: all hardware threads.
    bool verbose = true;  ///< Per-tensor lines and totals on stderr.
};

struct QuantizeSummary {
    std::uint64_t bytes_in = 0, bytes_out = 0;  ///< Tensor data sizes.
    int n_tensors = 0, n_quantized = 0, n_fallback = 0;
};

/// Reads `in_path` (a llama GGUF), writes `out_path` with every quantizable tensor converted
/// to its type for `type` (llama.cpp's mixture), all metadata kept, general.file_type set.
/// Throws ember::Error naming the file or tensor on failure (no partial file is left).
QuantizeSummary quantize_model(const std::string& in_path, const std::string& out_path,
                               const FileType& type, const QuantizeOptions& options = {});

}  // namespace ember::tools

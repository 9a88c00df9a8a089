// Which type each tensor of a llama model gets for a target file type: llama.cpp's
// llama_tensor_get_type for the common cases (legacy types, Q4_K_S/M, Q5_K_S/M, Q6_K, F16/BF16),
// and row conversion between float and every type ember can write.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "gguf/tensor_type.hpp"

namespace ember::tools {

/// A target file type: its name ("Q4_K_M"), llama.cpp's LLAMA_FTYPE value and its base type.
struct FileType {
    std::string_view name;
    std::uint32_t ftype;
    TensorType base;
};

/// The file type called `name` (case-insensitive), or nullptr.
const FileType* find_file_type(std::string_view name) noexcept;
/// "Q8_0, Q4_0, ..." for usage messages.
std::string file_type_names();

/// Whether llama.cpp quantizes a tensor at all (2-D+ weights, not norms).
bool is_quantizable(std::string_view name, std::uint32_t n_dims);

/// Picks tensor types in the order the tensors are written (counters follow llama.cpp).
class TypeChooser {
public:
    /// n_layer: block count; n_attn_v: number of attn_v tensors; has_output: the model has a
    /// separate output.weight (else token_embd gets the output's type).
    TypeChooser(const FileType& type, int n_layer, int n_attn_v, bool has_output);
    /// The type of a quantizable tensor whose rows have ne0 elements.
    TensorType choose(std::string_view name, std::int64_t ne0);
    /// How many tensors fell back to another type because of their row length.
    int n_fallback() const noexcept { return n_fallback_; }

private:
    TensorType with_fallback(TensorType t, std::int64_t ne0);
    const FileType& type_;
    int n_layer_, n_attn_v_;
    bool has_output_;
    int i_attn_v_ = 0, i_ffn_down_ = 0;
    int n_fallback_ = 0;
};

/// Order in which llama.cpp's loader lists tensors: non-block tensors first, then by block
/// number, by name within each group. Returns indices into `names`.
std::vector<std::size_t> llama_tensor_order(const std::vector<std::string>& names);

/// Bytes of one row of n elements of `type`.
std::uint64_t row_bytes(TensorType type, std::int64_t n);
/// Whether ember can write `type` (quantize float rows into it).
bool can_write(TensorType type) noexcept;
/// Converts n_rows rows of n_cols floats into `type` (any writable type, K-quants included).
void quantize_rows(TensorType type, const float* x, void* dst, std::int64_t n_rows, std::int64_t n_cols);
/// Converts rows [row0, row0 + n_rows) of a tensor of any readable type into floats.
void dequantize_rows(const gguf::TensorInfo& t, std::int64_t row0, std::int64_t n_rows, float* dst);

}  // namespace ember::tools

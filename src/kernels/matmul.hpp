// Matrix multiplication of GGUF weights with float activations: the hot path of every forward
// pass. Decode (n_tokens == 1) streams each weight row once; prefill reuses weight tiles across
// many activation rows. Activations are quantized once per call into caller-provided scratch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "gguf/gguf_file.hpp"
#include "kernels/type_kernels.hpp"

namespace ember {
class ZeroedArena;
}

namespace ember::kernels {

/// Whether WeightMatrix::prepare repacks weights into the 16-row interleaved layout
/// (kernels/packed.hpp). automatic: when the active ISA has packed kernels for the type and
/// EMBER_PACK is not "0". always: whenever the type has a packed layout (tests).
enum class Packing { automatic, never, always };

/// A weight matrix prepared for matmul: n_rows rows of n_cols elements (GGUF ne[1] rows of
/// ne[0] columns). Holds a view of the mapped bytes, or a repacked copy that replaces them (the
/// mapped bytes are then never read by matmul again).
class WeightMatrix {
public:
    WeightMatrix() = default;
    /// Throws ember::Error naming the tensor for a type matmul does not support. A repacked
    /// copy reads its source through `file` (the tensor's file) when given: File::copy.
    /// A repacked copy is taken from `arena` where given and it has room.
    static WeightMatrix prepare(const gguf::TensorInfo& tensor, Packing packing = Packing::automatic,
                                const gguf::File* file = nullptr, ZeroedArena* arena = nullptr);
    /// At least the bytes a repacked copy of `tensor` takes (0 when its type has no packed layout
    /// or the size does not fit size_t): for reserving an arena.
    static std::size_t packed_bytes_bound(const gguf::TensorInfo& tensor) noexcept;

    std::int64_t n_rows() const noexcept { return n_rows_; }
    std::int64_t n_cols() const noexcept { return n_cols_; }
    TensorType type() const noexcept { return type_; }
    const std::uint8_t* data() const noexcept { return data_; }
    std::size_t row_bytes() const noexcept { return row_bytes_; }
    /// Bytes of weights one full pass reads (for bandwidth figures).
    std::size_t bytes() const noexcept { return row_bytes_ * static_cast<std::size_t>(n_rows_); }
    /// Whether data() holds the packed 16-row layout (groups of group_bytes()) instead of rows.
    bool packed() const noexcept { return group_bytes_ != 0; }
    std::size_t group_bytes() const noexcept { return group_bytes_; }

private:
    TensorType type_ = TensorType::F32;
    std::int64_t n_rows_ = 0, n_cols_ = 0;
    std::size_t row_bytes_ = 0;
    std::size_t group_bytes_ = 0;  // packed layout: bytes per 16-row group; 0: row-major
    const std::uint8_t* data_ = nullptr;
    std::shared_ptr<const void> owned_;  // repacked storage, when any
    friend struct WeightMatrixAccess;
};

/// Scratch bytes matmul() needs for `n_tokens` activation rows against `w`.
std::size_t matmul_scratch_bytes(const WeightMatrix& w, std::int64_t n_tokens);

/// y[t * ldy + r] = sum_c W[r][c] * x[t * n_cols + c], for t < n_tokens, r < n_rows.
/// `scratch` holds at least matmul_scratch_bytes(w, n_tokens) bytes. Allocates nothing.
void matmul(const WeightMatrix& w, const float* x, std::int64_t n_tokens, float* y,
            std::int64_t ldy, std::span<std::byte> scratch, int n_threads);
/// Same on a given ISA's kernels (tests and benchmarks; `isa` must be available).
void matmul(const WeightMatrix& w, const float* x, std::int64_t n_tokens, float* y,
            std::int64_t ldy, std::span<std::byte> scratch, int n_threads, Isa isa);

/// One product of matmul_many: y[t * ldy + r] = W[r] . x[t].
struct MatmulJob {
    const WeightMatrix* w;
    float* y;
    std::int64_t ldy;
};

/// Several matmuls sharing the input x (e.g. q/k/v, gate/up): when all are packed with the same
/// row length, the activations are prepared once per weight type and one parallel region runs
/// all their rows; otherwise one matmul() after the other. `scratch` holds at least what
/// matmul() of any job needs; matrices of several types run as one product where it holds
/// matmul_many_scratch_bytes of them.
void matmul_many(std::span<const MatmulJob> jobs, const float* x, std::int64_t n_tokens,
                 std::span<std::byte> scratch, int n_threads);

/// Scratch for matmul_many to run the matrices `ws` as one product: matmul_scratch_bytes of one
/// matrix of each weight type among them (at least that of the largest).
std::size_t matmul_many_scratch_bytes(std::span<const WeightMatrix* const> ws, std::int64_t n_tokens);

/// Dequantizes row `row` of a tensor (any supported type) into n_cols floats.
void dequantize_row(const gguf::TensorInfo& tensor, std::int64_t row, float* dst);

}  // namespace ember::kernels

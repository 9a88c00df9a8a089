// ember-perplexity's KL-divergence mode, in llama.cpp's perplexity tool's file format and with its
// statistics, so that a quantized model is judged against a base (F32/F16) run by how far its
// next-token distributions move, not by greedy text.
//
// Base file (llama.cpp's --kl-divergence-base, little-endian):
//   "_logits_"  u32 n_ctx  i32 n_vocab  i32 n_chunk  i32 tokens[n_chunk * n_ctx]
//   then per chunk, for each scored position j in [n_ctx/2, n_ctx - 1): one row of
//   nv = 2 * ((n_vocab + 1) / 2) + 4 u16: f32 scale, f32 min_log_prob, then n_vocab u16 q with
//   log p = scale * q + min_log_prob (log-probabilities within 16 of the top one; lower ones 0).
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace ember::tools {

/// u16 words per stored row: the two floats and n_vocab values, padded to an even count.
inline std::int64_t log_prob_row_words(std::int64_t n_vocab) { return 2 * ((n_vocab + 1) / 2) + 4; }

/// Compresses the log-softmax of `logits` into `row` (log_prob_row_words(n) words) as llama.cpp
/// does; returns -log p(token) computed in float as llama.cpp does.
double compress_log_probs(std::span<const float> logits, std::int32_t token, std::span<std::uint16_t> row);

/// Header and tokens of a base file; its rows are read chunk by chunk with read_chunk().
struct LogitsBase {
    std::string path;
    std::uint32_t n_ctx = 0;
    std::int32_t n_vocab = 0, n_chunk = 0;
    std::vector<std::int32_t> tokens;  ///< n_chunk * n_ctx, as tokenized (no BOS substituted)

    std::int64_t rows_per_chunk() const { return n_ctx - 1 - n_ctx / 2; }
};

/// Writes the header and tokens of a base file.
void write_logits_header(std::ostream& out, std::uint32_t n_ctx, std::int32_t n_vocab, std::int32_t n_chunk,
                         std::span<const std::int32_t> tokens);

/// Reads and checks a base file's header and tokens against `n_vocab` (the model's) and the
/// file's size (every chunk's rows must be there, nothing after them). Throws ember::Error
/// naming the file and what is wrong.
LogitsBase read_logits_base(std::istream& in, const std::string& path, std::int64_t file_size, std::int64_t n_vocab);

/// Reads the rows of the next chunk (rows_per_chunk() x log_prob_row_words(n_vocab) words).
void read_chunk(std::istream& in, const LogitsBase& base, int chunk, std::vector<std::uint16_t>& rows);

/// Running statistics of a model's distributions against the base's (llama.cpp's set).
class KlDivergence {
public:
    /// Adds one position: the model's logits, the base's stored row, the token that followed.
    void add(std::span<const float> logits, std::span<const std::uint16_t> base_row, std::int32_t token);

    std::int64_t count() const noexcept { return count_; }
    /// One line per chunk: PPL, ln(PPL(Q)/PPL(base)), mean KLD, RMS of dp, same top p (each ±).
    std::string chunk_line(int chunk) const;
    /// The closing report (perplexity, KL divergence and token probability statistics).
    std::string report() const;

    double mean_kld() const;
    double same_top_fraction() const;
    double ppl() const;
    double ppl_base() const;

private:
    double sum_nll_ = 0, sum_nll2_ = 0, sum_nll_base_ = 0, sum_nll_base2_ = 0, sum_nll_nll_base_ = 0;
    double sum_kld_ = 0, sum_kld2_ = 0, sum_p_diff_ = 0, sum_p_diff2_ = 0, sum_p_diff4_ = 0;
    std::int64_t n_same_top_ = 0, count_ = 0;
    std::vector<float> kld_values_, p_diff_values_;
};

}  // namespace ember::tools

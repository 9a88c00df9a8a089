// Model::embed: pooled final hidden states of whole texts. Texts are grouped so that a group's
// tokens fit in one forward pass (each text is its own sequence with its own KV cache); a text
// longer than the batch is a group of its own and runs in chunks.
#include <algorithm>
#include <cmath>
#include <string>

#include "api/model_impl.hpp"
#include "model/batch.hpp"
#include "model/kv_cache.hpp"
#include "runtime/fail.hpp"
#include "runtime/parallel.hpp"

namespace ember {
namespace {

std::size_t sz(std::int64_t n) { return static_cast<std::size_t>(n); }

// Runs sequences [first, last) (their tokens total at most `batch`, or one longer sequence) and
// adds their pooled hidden states into out[first..last).
void embed_group(const detail::ModelImpl& m, const std::vector<std::vector<Token>>& seqs, std::size_t first,
                 std::size_t last, const EmbedOptions& o, int n_threads, std::vector<std::vector<float>>& out) {
    const auto& c = m.config;
    std::int64_t total = 0, longest = 0;
    for (std::size_t i = first; i < last; ++i) {
        total += static_cast<std::int64_t>(seqs[i].size());
        longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(seqs[i].size()));
    }
    const std::int64_t n_batch = std::min<std::int64_t>(o.batch, total);
    std::vector<model::KvCache> caches;
    caches.reserve(last - first);
    for (std::size_t i = first; i < last; ++i) caches.emplace_back(c, static_cast<std::int64_t>(seqs[i].size()), n_batch);
    std::vector<model::KvCache*> cache_ptrs;
    for (auto& cache : caches) cache_ptrs.push_back(&cache);
    model::ForwardScratch scratch(c, m.weights, n_batch, longest, /*n_logit_rows=*/0, n_threads,
                                  /*n_hidden_rows=*/n_batch);
    std::vector<model::BatchRow> rows;
    std::vector<std::size_t> row_seq;  // out[] index of each row
    rows.reserve(sz(n_batch));
    row_seq.reserve(sz(n_batch));

    auto flush = [&] {
        if (rows.empty()) return;
        const bool ran = m.forward.run(rows, cache_ptrs, scratch, n_threads, {});
        EMBER_ASSERT(ran);
        std::int64_t h = 0;
        for (std::size_t r = 0; r < rows.size(); ++r) {
            if (!rows[r].hidden) continue;
            const std::span<const float> state = scratch.hidden(h++);
            std::vector<float>& acc = out[row_seq[r]];
            for (std::size_t k = 0; k < state.size(); ++k) acc[k] += state[k];
        }
        rows.clear();
        row_seq.clear();
    };
    for (std::size_t i = first; i < last; ++i) {
        const auto& tokens = seqs[i];
        for (std::size_t p = 0; p < tokens.size(); ++p) {
            const bool wanted = o.pooling == EmbedOptions::Pooling::mean || p + 1 == tokens.size();
            rows.push_back({.token = tokens[p],
                            .pos = static_cast<std::int32_t>(p),
                            .seq = static_cast<std::int32_t>(i - first),
                            .logits = false,
                            .hidden = wanted});
            row_seq.push_back(i);
            if (static_cast<std::int64_t>(rows.size()) == n_batch) flush();
        }
    }
    flush();
}

}  // namespace

std::vector<std::vector<float>> Model::embed_tokens(const std::vector<std::vector<Token>>& sequences,
                                                    const EmbedOptions& options) const {
    const detail::ModelImpl& m = *impl_;
    if (options.batch <= 0) fail("EmbedOptions::batch must be > 0, got " + std::to_string(options.batch));
    if (options.threads < 0) fail("EmbedOptions::threads must be >= 0, got " + std::to_string(options.threads));
    for (std::size_t i = 0; i < sequences.size(); ++i) {
        const auto& s = sequences[i];
        if (s.empty()) fail("embed: text " + std::to_string(i) + " has no tokens");
        if (static_cast<std::int64_t>(s.size()) > m.config.n_ctx_train) {
            fail("embed: text " + std::to_string(i) + " has " + std::to_string(s.size()) +
                 " tokens, more than the model's training context of " + std::to_string(m.config.n_ctx_train));
        }
        for (Token t : s) {
            if (t < 0 || t >= m.config.n_vocab) {
                fail("embed: text " + std::to_string(i) + " has token id " + std::to_string(t) +
                     ", outside the vocabulary [0, " + std::to_string(m.config.n_vocab) + ")");
            }
        }
    }
    const int n_threads = resolve_threads(options.threads > 0 ? options.threads : m.options.threads);
    std::vector<std::vector<float>> out(sequences.size(), std::vector<float>(sz(m.config.n_embd), 0.0f));
    for (std::size_t first = 0; first < sequences.size();) {
        std::size_t last = first + 1;
        std::int64_t total = static_cast<std::int64_t>(sequences[first].size());
        while (last < sequences.size() && total + static_cast<std::int64_t>(sequences[last].size()) <= options.batch) {
            total += static_cast<std::int64_t>(sequences[last].size());
            ++last;
        }
        embed_group(m, sequences, first, last, options, n_threads, out);
        first = last;
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::vector<float>& v = out[i];
        if (options.pooling == EmbedOptions::Pooling::mean) {
            const float inv = 1.0f / static_cast<float>(sequences[i].size());
            for (float& x : v) x *= inv;
        }
        if (options.normalize) {
            double norm = 0.0;
            for (float x : v) norm += static_cast<double>(x) * x;
            if (norm > 0.0) {
                const auto inv = static_cast<float>(1.0 / std::sqrt(norm));
                for (float& x : v) x *= inv;
            }
        }
    }
    return out;
}

std::vector<std::vector<float>> Model::embed(const std::vector<std::string>& texts,
                                             const EmbedOptions& options) const {
    std::vector<std::vector<Token>> sequences;
    sequences.reserve(texts.size());
    for (const std::string& text : texts) sequences.push_back(tokenize(text, {.add_bos = options.add_bos}));
    return embed_tokens(sequences, options);
}

std::vector<float> Model::embed(std::string_view text, const EmbedOptions& options) const {
    return std::move(embed(std::vector<std::string>{std::string(text)}, options).front());
}

}  // namespace ember

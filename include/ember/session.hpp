// ember/session.hpp: one sequence being generated: its tokens, KV cache, logits and timings.
//
// Thread safety: a Session is used by one thread at a time. Many Sessions may run on different
// threads against the same Model at once. Sessions are move-only; clone() makes an explicit copy.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ember/error.hpp"
#include "ember/model.hpp"
#include "ember/types.hpp"

namespace ember {

/// Options for a Session.
struct SessionOptions {
    /// Context length in tokens (KV cache size). 0: the model's training context, capped at 4096.
    int context = 0;
    /// Worker threads for this session's forward passes. 0: the model's ModelOptions::threads.
    int threads = 0;
    /// Most tokens one forward pass takes during prefill (longer prompts run in chunks).
    int batch = 512;
    /// Keep the logits of every token of the last prefill (for perplexity and scoring), not
    /// only of the last one. Costs batch x n_vocab floats.
    bool logits_all = false;
};

/// Timings of a session, from a monotonic clock.
struct Metrics {
    std::int64_t prompt_tokens = 0;     ///< Tokens processed by prefill().
    std::int64_t generated_tokens = 0;  ///< Tokens processed by decode().
    double prefill_seconds = 0.0;
    double decode_seconds = 0.0;
    double ttft_seconds = 0.0;  ///< Time of the first prefill (time to first token's logits).
    double prefill_tokens_per_second() const noexcept {
        return prefill_seconds > 0 ? prompt_tokens / prefill_seconds : 0.0;
    }
    double decode_tokens_per_second() const noexcept {
        return decode_seconds > 0 ? generated_tokens / decode_seconds : 0.0;
    }
    /// Mean time per output token, in seconds.
    double tpot_seconds() const noexcept {
        return generated_tokens > 0 ? decode_seconds / generated_tokens : 0.0;
    }
};

class Session {
public:
    /// Creates a session and allocates its KV cache and scratch buffers (the only allocation:
    /// prefill and decode allocate nothing). Throws ember::Error for invalid options.
    explicit Session(const Model& model, SessionOptions options = {});
    ~Session();
    Session(Session&&) noexcept;
    Session& operator=(Session&&) noexcept;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    /// Runs the tokens through the model after the tokens already in the session. Throws
    /// ember::Error when they cannot fit in the context at all or an id is outside the vocabulary
    /// (before any work). Returns Status::cancelled if the cancel callback stopped it (the session
    /// then holds the tokens processed before the stop).
    Status prefill(std::span<const Token> tokens);

    /// Runs one token. Returns Status::context_full when the context is full (nothing changes),
    /// Status::invalid_input for an id outside the vocabulary.
    Status decode(Token token);

    /// Logits (one per vocabulary entry) after the last token processed; empty before any.
    std::span<const float> logits() const noexcept;

    /// With SessionOptions::logits_all: logits after token `i` of the last prefill chunk
    /// (0 <= i < its length, at most `batch`). Throws ember::Error otherwise.
    std::span<const float> logits_at(int i) const;

    /// The tokens in the session, in order.
    const std::vector<Token>& tokens() const noexcept;
    int n_past() const noexcept;   ///< Number of tokens in the KV cache.
    int context() const noexcept;  ///< Context length in tokens.

    /// Text for `token` as it streams out: UTF-8 safe, holding back an incomplete multi-byte
    /// character until its last byte arrives.
    std::string detokenize_stream(Token token);

    /// Called between layers and tokens during prefill and decode; return true to cancel.
    void set_cancel_callback(std::function<bool()> should_cancel);

    /// Forgets every token (the KV cache is kept allocated). Metrics restart too.
    void reset();
    /// A deep copy: same tokens, KV cache, logits and stream state.
    Session clone() const;

    const Metrics& metrics() const noexcept;
    const Model& model() const noexcept;

private:
    struct Impl;
    explicit Session(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember

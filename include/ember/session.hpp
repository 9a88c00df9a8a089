// ember/session.hpp: one sequence being generated: its tokens, KV cache, logits and timings.
//
// Thread safety: a Session is used by one thread at a time (none of its member functions may
// run concurrently with another on the same Session, const ones included, except that the
// cancel callback is called from the thread running the step). Many Sessions may run on
// different threads against the same Model at once: they share only the Model's immutable
// weights, configuration and tokenizer. Give each Session its own Sampler. Sessions are
// move-only; clone() makes an explicit copy.
//
// The token loop, by hand or with generate():
//
//   ember::Session session(model, {.context = 2048});
//   ember::Sampler sampler({.temperature = 0.8f, .seed = 42});
//   session.prefill(model.tokenize("Once upon a time"));
//   auto r = session.generate(sampler, {.max_tokens = 256, .stop = {"\n\n"},
//       .on_token = [](ember::Token, std::string_view text) {
//           std::cout << text << std::flush; return true; }});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ember/error.hpp"
#include "ember/export.h"
#include "ember/model.hpp"
#include "ember/sampler.hpp"
#include "ember/types.hpp"

namespace ember {

class Sampler;
class Speculator;

namespace detail {
struct SessionAccess;
}

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
    /// When the context is full, shift it instead of returning Status::context_full (llama.cpp's
    /// context shift): keep the first `n_keep` tokens, drop half of the tokens after them
    /// ((n_past - n_keep) / 2, the oldest), move the rest down and re-rotate their cached keys
    /// so generation continues coherently. The model then no longer sees the dropped tokens.
    bool context_shift = false;
    /// Tokens at the start of the session that a context shift never drops (e.g. BOS and a
    /// system prompt). 0 <= n_keep < context, else the constructor throws ember::Error.
    int n_keep = 0;
    /// How the KV cache stores keys and values (types.hpp). The constructor throws ember::Error
    /// for Q8_0 when the model's head dimension is not a multiple of 32.
    KvType kv_type = KvType::f32;
};

/// Timings of a session, from a monotonic clock (std::chrono::steady_clock).
struct Metrics {
    std::int64_t prompt_tokens = 0;     ///< Tokens processed by prefill().
    std::int64_t generated_tokens = 0;  ///< Tokens processed by decode() (and generate()).
    std::int64_t context_shifts = 0;    ///< Context shifts done (SessionOptions::context_shift).
    double prefill_seconds = 0.0;       ///< Wall time inside prefill().
    double decode_seconds = 0.0;        ///< Wall time inside decode() steps that ran.
    /// Time to first token: wall time of the first prefill() of the session (or since reset()),
    /// from its start until the logits of its last token were ready.
    double ttft_seconds = 0.0;
    /// Speculative decoding (GenerateOptions::speculative): verification passes, tokens proposed,
    /// and proposed tokens kept. Its steps count in generated_tokens (the tokens they kept) and
    /// decode_seconds (proposing and verifying).
    std::int64_t speculative_steps = 0;
    std::int64_t draft_tokens = 0;
    std::int64_t accepted_tokens = 0;
    /// Share of proposed tokens kept (0 without speculative decoding).
    double acceptance_rate() const noexcept {
        return draft_tokens > 0 ? static_cast<double>(accepted_tokens) / static_cast<double>(draft_tokens) : 0.0;
    }
    /// Proposed tokens kept per verification pass (each pass also adds one token of the target's).
    double mean_accepted_length() const noexcept {
        return speculative_steps > 0
                   ? static_cast<double>(accepted_tokens) / static_cast<double>(speculative_steps)
                   : 0.0;
    }
    /// The same for the latest prefill() that completed (e.g. each turn of a chat), and its tokens.
    double last_ttft_seconds = 0.0;
    std::int64_t last_prompt_tokens = 0;
    std::int64_t prefills = 0;          ///< prefill() calls that completed.
    double prefill_tokens_per_second() const noexcept {
        return prefill_seconds > 0 ? static_cast<double>(prompt_tokens) / prefill_seconds : 0.0;
    }
    double decode_tokens_per_second() const noexcept {
        return decode_seconds > 0 ? static_cast<double>(generated_tokens) / decode_seconds : 0.0;
    }
    /// Mean time per output token, in seconds.
    double tpot_seconds() const noexcept {
        return generated_tokens > 0 ? decode_seconds / static_cast<double>(generated_tokens) : 0.0;
    }
};

/// Why generate() stopped.
enum class StopReason {
    eog,           ///< The sampler picked an end-of-generation token (Model::is_end_of_generation).
    stop_string,   ///< The text reached one of GenerateOptions::stop.
    max_tokens,    ///< GenerateOptions::max_tokens tokens were generated.
    context_full,  ///< The context is full and SessionOptions::context_shift is off (Engine: or
                   ///< its KV cache pool cannot hold the request even alone, Status::cache_full).
    cancelled,     ///< on_token returned false, or the cancel callback stopped a step.
    error,         ///< An Engine request failed (RequestResult::error); never from generate().
};

/// A short name for a StopReason ("eog", "stop_string", ...).
inline const char* to_string(StopReason r) noexcept {
    switch (r) {
        case StopReason::eog: return "eog";
        case StopReason::stop_string: return "stop_string";
        case StopReason::max_tokens: return "max_tokens";
        case StopReason::context_full: return "context_full";
        case StopReason::cancelled: return "cancelled";
        case StopReason::error: return "error";
    }
    return "unknown";
}

/// Options for Session::generate.
struct GenerateOptions {
    /// Most tokens to generate (the end-of-generation token does not count). < 0: no limit.
    int max_tokens = -1;
    /// Stop strings (llama.cpp server semantics): generation stops when the text contains one,
    /// also across token boundaries. Text that could be the start of a stop string is held back
    /// until it is known not to be one; the stop string and anything after it are never
    /// emitted. Empty strings are ignored.
    std::vector<std::string> stop{};
    /// Called for every generated token with the text it releases (UTF-8 complete characters
    /// only; may be empty while text is held back). Return false to stop (StopReason::cancelled,
    /// Status::ok). When generation ends for another reason than a stop string with text still
    /// held back, a last call with token kNoToken delivers it. During the call, Session::logits()
    /// are still those the token was sampled from (e.g. for ember::logprobs while streaming).
    std::function<bool(Token token, std::string_view text)> on_token{};
    /// Speculative decoding (ember/speculative.hpp): a proposer guesses tokens and each step
    /// checks them in one forward pass. The tokens come out the same as without it (greedy:
    /// identical; sampled: the same distribution), faster when the guesses are good. Proposals
    /// shrink near the end of the context, and a step without one is a plain decode step (which
    /// does the context shift, so that behaves as without speculation). The Speculator must be
    /// made for this session's model (else ember::Error). nullptr: plain decoding.
    Speculator* speculative = nullptr;

    /// Report the log-probability of every generated token in GenerateResult::logprobs (OpenAI's
    /// `logprobs`): the model's raw distribution, before the sampler's stages (ember::logprobs).
    bool logprobs = false;
    /// With logprobs: also the this many most likely tokens at each position (OpenAI's
    /// `top_logprobs`, 0 to 20 there; any count >= 0 here).
    int top_logprobs = 0;
    /// With logprobs: called with each generated token's entry as soon as it is sampled, just
    /// before on_token (so a stream can carry logprobs with its text; an Engine calls it on its
    /// worker thread). The same entries end up in GenerateResult::logprobs.
    std::function<void(const TokenLogprobs&)> on_logprobs{};
};

/// Most bytes of application data Session::save_state keeps with a state.
inline constexpr std::size_t kMaxStateUserData = std::size_t{64} << 20;

/// The token argument of the last GenerateOptions::on_token call that only releases text.
inline constexpr Token kNoToken = -1;

/// What generate() produced.
struct GenerateResult {
    std::string text{};          ///< Everything passed to on_token, in order (no stop string).
    std::vector<Token> tokens{}; ///< Generated tokens (without the end-of-generation token).
    StopReason stop_reason = StopReason::max_tokens;
    /// ok, context_full (stop_reason context_full) or cancelled (the cancel callback stopped a
    /// step; stop_reason cancelled).
    Status status = Status::ok;
    std::string stop_string{};   ///< The stop string found (stop_reason stop_string), else "".
    /// True when the last token of `tokens` was emitted but its decode step was cancelled: the
    /// session does not hold it yet (logits() still predict it). decode() it to continue.
    bool last_token_pending = false;
    /// With GenerateOptions::logprobs: one entry per token of `tokens`, in order.
    std::vector<TokenLogprobs> logprobs{};
};

class EMBER_API Session {
public:
    /// Creates a session and allocates its KV cache and scratch buffers (the only allocation:
    /// prefill and decode allocate nothing). Throws ember::Error for invalid options.
    explicit Session(const Model& model, SessionOptions options = {});
    ~Session();
    Session(Session&&) noexcept;
    Session& operator=(Session&&) noexcept;
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // ---- the token loop ---------------------------------------------------------------------

    /// Runs the tokens through the model after the tokens already in the session, in chunks of
    /// at most SessionOptions::batch. Throws ember::Error, before any work, when an id is outside
    /// the vocabulary or the tokens cannot fit in the context (without context_shift: more than
    /// context() - n_past(); with it: more than the context minus the kept tokens). Returns
    /// Status::invalid_input for an empty span. Returns Status::cancelled if the cancel callback
    /// stopped it: the session then holds the chunks completed before the stop, and logits()
    /// belong to its last token, so prefilling the rest of the tokens continues exactly.
    Status prefill(std::span<const Token> tokens);

    /// Runs one token. When the context is full: shifts it (SessionOptions::context_shift) or
    /// returns Status::context_full (nothing changes). Status::invalid_input for an id outside
    /// the vocabulary, Status::cancelled if the cancel callback stopped it (nothing changes).
    /// Allocates nothing.
    Status decode(Token token);

    /// Runs `tokens` after the tokens already in the session as ONE forward pass and keeps the
    /// logits after every one of them: logits_at(i) predicts what follows tokens[i], and
    /// logits() are the last row's. This is how a speculative proposal is verified (the
    /// rejected tail then goes with truncate(), which takes the kept logits without a pass);
    /// it also scores a continuation. Counts as prefill in the metrics. Throws ember::Error,
    /// before any work, for an id outside the vocabulary, more than SessionOptions::batch
    /// tokens, or tokens that do not fit in what is left of the context (evaluate never shifts
    /// the context). Status::invalid_input for an empty span; Status::cancelled if the cancel
    /// callback stopped it (nothing changes then). Allocates room for the logits rows the first
    /// time it runs that many.
    Status evaluate(std::span<const Token> tokens);

    /// Samples and decodes tokens until an end-of-generation token, a stop string, max_tokens,
    /// a full context (without context_shift) or cancellation; see GenerateOptions. Each emitted
    /// token is decoded into the session before the next is sampled, so afterwards tokens() ends
    /// with result.tokens (except a pending one, see GenerateResult::last_token_pending) and
    /// logits() predict what follows; the end-of-generation token is not decoded. Text comes
    /// from the same UTF-8 stream as detokenize_stream(). Throws ember::Error when there are no
    /// logits yet (nothing prefilled) and passes on the Sampler's and on_token's exceptions.
    GenerateResult generate(Sampler& sampler, const GenerateOptions& options = {});

    /// Keeps the first `n` tokens and forgets the rest (edit and regenerate, speculative
    /// rollback); 0 <= n <= n_past(), else throws ember::Error (also when sliding-window layers
    /// already dropped what position n - 1 reads: Gemma-style models keep only a window and a
    /// batch behind the last position). Afterwards logits() predict what
    /// follows token n - 1: they are copied from the last forward pass when it computed them
    /// (SessionOptions::logits_all and token n - 1 in the last chunk), else recomputed by running
    /// token n - 1 again (one decode step; its cache entry is rewritten with identical values,
    /// since a row's results never depend on its batch). So truncating and then continuing gives
    /// exactly what a fresh session given the same tokens gives (after a context shift, the kept
    /// keys were re-rotated, so equal up to rounding). truncate(n_past()) changes nothing and
    /// truncate(0) is reset() without resetting metrics. Returns Status::cancelled when the
    /// cancel callback stopped the recomputation (nothing changed then), else Status::ok. The
    /// text stream restarts; metrics are kept.
    Status truncate(int n);

    /// Logits (one per vocabulary entry) after the last token processed; empty before any.
    std::span<const float> logits() const noexcept;

    /// Logits after token `i` of the last forward pass when it kept every row's: an evaluate()
    /// call, or a prefill chunk with SessionOptions::logits_all (0 <= i < its length, at most
    /// `batch`). Throws ember::Error otherwise. Valid until the next call that changes the session.
    std::span<const float> logits_at(int i) const;

    /// The tokens in the session, in order (after a context shift, without the dropped ones).
    const std::vector<Token>& tokens() const noexcept;
    int n_past() const noexcept;   ///< Number of tokens in the KV cache.
    int context() const noexcept;  ///< Context length in tokens.

    /// Text for `token` as it streams out: UTF-8 safe, holding back an incomplete multi-byte
    /// character until its last byte arrives.
    std::string detokenize_stream(Token token);
    /// What the stream holds back (an incomplete character comes out as U+FFFD); the stream
    /// then starts afresh.
    std::string flush_stream();

    /// Called between layers and chunks during prefill and decode (on the calling thread);
    /// return true to cancel the step. An empty function removes it.
    void set_cancel_callback(std::function<bool()> should_cancel);

    /// Called during prefill() after each chunk (SessionOptions::batch tokens) with the tokens of
    /// this prefill() done so far and their total, on the calling thread; the last call has
    /// done == total. An empty function removes it.
    void set_progress_callback(std::function<void(std::int64_t done, std::int64_t total)> on_progress);

    // ---- state --------------------------------------------------------------------------------

    /// Forgets every token (the KV cache is kept allocated). Metrics and the text stream restart.
    void reset();
    /// A deep copy: same tokens, KV cache, logits, options, cancel callback and stream state.
    Session clone() const;

    /// The session as bytes: a versioned header (magic, version, model fingerprint, context
    /// size), the tokens, the KV cache of the used positions, the logits, the state of `sampler`
    /// when one is given (Sampler::save_state), and `user_data`: bytes of the application's own
    /// (e.g. a chat history, at most kMaxStateUserData) kept with the state. A checksum covers
    /// every byte. The model fingerprint is a hash of every byte of the model file, computed
    /// once per Model on the first save or restore (about 0.11 s of CPU per GB of file, spread
    /// over the model's threads).
    std::vector<std::uint8_t> save_state(const Sampler* sampler = nullptr, std::string_view user_data = {}) const;
    /// Restores what save_state() wrote, into a session of the same model file whose context
    /// holds the saved tokens (the context size may differ). Restores `sampler` too when one is
    /// given (the state must then hold one), and sets `*user_data` when given. Throws
    /// ember::Error for bytes that are truncated, corrupt (any changed byte fails the checksum),
    /// of another version, from another model file (other weights included), or that do not
    /// fit; everything is checked before anything changes, so the session, the sampler and
    /// `*user_data` are unchanged then. The text stream restarts; metrics are kept.
    void restore_state(std::span<const std::uint8_t> bytes, Sampler* sampler = nullptr,
                       std::string* user_data = nullptr);
    /// save_state() to a file: written to a temporary file in the same folder, then renamed over
    /// `path`. Throws ember::Error naming the file when it cannot be written or when `path`
    /// exists and is not a regular file (a directory, device or FIFO is never replaced).
    void save_state_file(const std::string& path, const Sampler* sampler = nullptr,
                         std::string_view user_data = {}) const;
    /// restore_state() from a file, which must be a regular file no larger than a state of this
    /// session can be. Throws ember::Error naming the file.
    void restore_state_file(const std::string& path, Sampler* sampler = nullptr, std::string* user_data = nullptr);

    const Metrics& metrics() const noexcept;
    const SessionOptions& options() const noexcept;
    const Model& model() const noexcept;

private:
    friend struct detail::SessionAccess;
    struct EMBER_HIDDEN Impl;
    EMBER_HIDDEN explicit Session(std::unique_ptr<Impl> impl);
    EMBER_HIDDEN void restore_from(std::span<const std::uint8_t> bytes, Sampler* sampler, std::string* user_data,
                                   const std::string& name);
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember

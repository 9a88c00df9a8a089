// A conversation with a model: history, the model's chat template, one session whose KV cache
// is reused from turn to turn, and the sampler.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "chat_options.hpp"
#include "ember/ember.hpp"

namespace ember_chat {

/// What one answer produced.
struct Answer {
    std::string text;
    ember::Status status = ember::Status::ok;
    bool interrupted = false;   ///< Ctrl-C stopped it.
    std::int64_t prompt_tokens = 0;  ///< New tokens prefilled for this turn.
    std::int64_t generated_tokens = 0;
    double prefill_seconds = 0.0, decode_seconds = 0.0;
    bool speculative = false;          ///< --draft or --lookup was on.
    std::int64_t draft_tokens = 0;     ///< Tokens proposed for this answer.
    std::int64_t accepted_tokens = 0;  ///< Of those, accepted.
};

class Conversation {
public:
    /// `speculator`: speculative decoding (--draft, --lookup), or nullptr.
    Conversation(const ember::Model& model, const Options& options, ember::Speculator* speculator = nullptr);

    /// Adds a user message, renders the conversation with the chat template and streams the
    /// assistant's answer to `out`.
    Answer user_turn(const std::string& text, std::FILE* out);

    /// Continues `prompt` as raw text (no template), streaming the continuation to `out`.
    Answer complete(const std::string& prompt, std::FILE* out);

    /// Brings the session to the prompt of one turn without answering it: `text` as a user
    /// message with the chat template, or as raw text (`completion`). For --beams and
    /// --samples (strategies.cpp), which answer from the session themselves.
    void prefill_turn(const std::string& text, bool completion, Answer& answer);

    /// Forgets the conversation (the system message stays).
    void reset();

    /// One line of metrics for an answer (prompt tokens, TTFT, prefill and decode tokens/s).
    static std::string metrics_line(const Answer& a);
    /// Session totals for /stats.
    std::string stats() const;

    const ember::Session& session() const noexcept { return session_; }
    ember::Session& session() noexcept { return session_; }
    ember::Sampler& sampler() noexcept { return sampler_; }
    std::vector<ember::ChatMessage>& history() noexcept { return history_; }

private:
    /// The tokens of a turn's prompt (adds the user message to the history in chat mode).
    std::vector<ember::Token> turn_tokens(const std::string& text, bool completion);
    /// Brings the session to exactly `tokens`, reusing the longest cached prefix.
    ember::Status sync(const std::vector<ember::Token>& tokens, Answer& answer);
    /// Samples and streams until end of generation, -n, a stop string or Ctrl-C.
    void generate(Answer& answer, std::FILE* out);

    const ember::Model& model_;
    const Options& options_;
    ember::Session session_;
    ember::Sampler sampler_;
    ember::Speculator* speculator_;
    std::vector<ember::ChatMessage> history_;
};

}  // namespace ember_chat

namespace ember_chat {
/// /save and /load: the conversation (history, session state, sampler state) in one file.
void save_conversation(Conversation& chat, const std::string& path);
void load_conversation(Conversation& chat, const std::string& path);
}  // namespace ember_chat

#include "conversation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "terminal.hpp"

namespace ember_chat {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

ember::SessionOptions session_options(const Options& o) {
    ember::SessionOptions s;
    s.context = o.context;
    s.threads = o.threads;
    return s;
}

}  // namespace

Conversation::Conversation(const ember::Model& model, const Options& options)
    : model_(model), options_(options), session_(model, session_options(options)),
      sampler_(options.sampler) {
    session_.set_cancel_callback([] { return interrupted(); });
    reset();
}

void Conversation::reset() {
    history_.clear();
    if (!options_.system.empty()) history_.push_back({"system", options_.system});
    session_.reset();
    sampler_.reset();
}

ember::Status Conversation::sync(const std::vector<ember::Token>& tokens, Answer& answer) {
    const auto& cached = session_.tokens();
    const bool extends = cached.size() < tokens.size() &&
                         std::equal(cached.begin(), cached.end(), tokens.begin());
    if (!extends) session_.reset();
    const std::size_t start = session_.tokens().size();
    const std::span<const ember::Token> fresh(tokens.data() + start, tokens.size() - start);
    for (ember::Token t : fresh) sampler_.accept(t);
    const auto t0 = Clock::now();
    const ember::Status status = session_.prefill(fresh);  // throws if it cannot fit
    answer.prefill_seconds = seconds_since(t0);
    answer.prompt_tokens = static_cast<std::int64_t>(fresh.size());
    return status;
}

void Conversation::generate(Answer& answer, std::FILE* out) {
    const auto t0 = Clock::now();
    set_generating(true);
    ember::Status status = answer.status;
    while (status == ember::Status::ok &&
           (options_.n_predict < 0 || answer.generated_tokens < options_.n_predict)) {
        if (interrupted()) break;
        const ember::Token t = sampler_.sample(session_.logits());
        if (model_.is_end_of_generation(t)) break;
        const std::string piece = session_.detokenize_stream(t);
        answer.text += piece;
        std::fwrite(piece.data(), 1, piece.size(), out);
        std::fflush(out);
        status = session_.decode(t);
        if (status == ember::Status::ok) ++answer.generated_tokens;
    }
    set_generating(false);
    answer.interrupted = interrupted() || status == ember::Status::cancelled;
    clear_interrupt();
    answer.status = status;
    answer.decode_seconds = seconds_since(t0);
}

Answer Conversation::user_turn(const std::string& text, std::FILE* out) {
    Answer answer;
    history_.push_back({"user", text});
    const std::string prompt =
        model_.apply_chat_template(history_, /*add_generation_prompt=*/true, options_.chat_template);
    const auto tokens = model_.tokenize(prompt, {.add_bos = true, .parse_special = true});
    answer.status = sync(tokens, answer);
    generate(answer, out);
    history_.push_back({"assistant", answer.text});
    return answer;
}

Answer Conversation::complete(const std::string& prompt, std::FILE* out) {
    Answer answer;
    const auto tokens = model_.tokenize(prompt, {.add_bos = true});
    answer.status = sync(tokens, answer);
    generate(answer, out);
    return answer;
}

std::string Conversation::metrics_line(const Answer& a) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "prompt %lld tokens, TTFT %.1f ms, prefill %.1f tok/s, decode %lld tokens at %.1f tok/s",
                  static_cast<long long>(a.prompt_tokens), a.prefill_seconds * 1e3,
                  a.prefill_seconds > 0 ? a.prompt_tokens / a.prefill_seconds : 0.0,
                  static_cast<long long>(a.generated_tokens),
                  a.decode_seconds > 0 ? a.generated_tokens / a.decode_seconds : 0.0);
    return line;
}

std::string Conversation::stats() const {
    const ember::Metrics& m = session_.metrics();
    char line[320];
    std::snprintf(line, sizeof line,
                  "context %d/%d tokens; prompt %lld tokens at %.1f tok/s; generated %lld tokens "
                  "at %.1f tok/s (%.2f ms/token); first TTFT %.1f ms",
                  session_.n_past(), session_.context(), static_cast<long long>(m.prompt_tokens),
                  m.prefill_tokens_per_second(), static_cast<long long>(m.generated_tokens),
                  m.decode_tokens_per_second(), m.tpot_seconds() * 1e3, m.ttft_seconds * 1e3);
    return line;
}

}  // namespace ember_chat

namespace ember_chat {
void save_conversation(Conversation&, const std::string& path) {
    throw ember::Error(path + ": saving is not available yet");
}
void load_conversation(Conversation&, const std::string& path) {
    throw ember::Error(path + ": loading is not available yet");
}
}  // namespace ember_chat

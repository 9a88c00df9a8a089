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
    s.kv_type = o.kv_type;
    s.context_shift = o.context_shift;
    s.n_keep = o.keep;
    return s;
}

}  // namespace

Conversation::Conversation(const ember::Model& model, const Options& options, ember::Speculator* speculator)
    : model_(model), options_(options), session_(model, session_options(options)),
      sampler_(model, options.sampler), speculator_(speculator) {
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
    if (answer.status != ember::Status::ok) return;
    ember::GenerateOptions g;
    g.max_tokens = options_.n_predict;
    g.stop = options_.stop;
    g.speculative = speculator_;
    g.on_token = [out](ember::Token, std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), out);
        std::fflush(out);
        return !interrupted();
    };
    const ember::Metrics before = session_.metrics();
    const auto t0 = Clock::now();
    set_generating(true);
    sampler_.reset_grammar();  // each answer is a sentence of the grammar on its own
    ember::GenerateResult r = session_.generate(sampler_, g);
    set_generating(false);
    answer.decode_seconds = seconds_since(t0);
    answer.speculative = speculator_ != nullptr;
    answer.draft_tokens = session_.metrics().draft_tokens - before.draft_tokens;
    answer.accepted_tokens = session_.metrics().accepted_tokens - before.accepted_tokens;
    answer.interrupted = interrupted() || r.stop_reason == ember::StopReason::cancelled;
    clear_interrupt();
    if (r.last_token_pending) {
        // Ctrl-C landed inside the decode of the last shown token: run it so the session holds
        // every token the user saw.
        r.status = session_.decode(r.tokens.back());
    }
    answer.text = std::move(r.text);
    answer.generated_tokens = static_cast<std::int64_t>(r.tokens.size());
    answer.status = r.status == ember::Status::cancelled ? ember::Status::ok : r.status;
}

std::vector<ember::Token> Conversation::turn_tokens(const std::string& text, bool completion) {
    if (completion) return model_.tokenize(text, {.add_bos = true});
    history_.push_back({"user", text});
    const std::string prompt =
        model_.apply_chat_template(history_, /*add_generation_prompt=*/true, options_.chat_template);
    auto tokens = model_.tokenize(prompt, {.add_bos = true, .parse_special = true});
    // Templates that write the BOS themselves (Gemma, Llama 3) would get a second one from the
    // tokenizer; llama.cpp strips it from the rendered text, which gives the same tokens.
    if (tokens.size() >= 2 && tokens[0] == model_.bos() && tokens[1] == model_.bos()) tokens.erase(tokens.begin());
    return tokens;
}

Answer Conversation::user_turn(const std::string& text, std::FILE* out) {
    Answer answer;
    answer.status = sync(turn_tokens(text, false), answer);
    generate(answer, out);
    history_.push_back({"assistant", answer.text});
    return answer;
}

Answer Conversation::complete(const std::string& prompt, std::FILE* out) {
    Answer answer;
    answer.status = sync(turn_tokens(prompt, true), answer);
    generate(answer, out);
    return answer;
}

void Conversation::prefill_turn(const std::string& text, bool completion, Answer& answer) {
    answer.status = sync(turn_tokens(text, completion), answer);
}

std::string Conversation::metrics_line(const Answer& a) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "prompt %lld tokens, TTFT %.1f ms, prefill %.1f tok/s, decode %lld tokens at %.1f tok/s",
                  static_cast<long long>(a.prompt_tokens), a.prefill_seconds * 1e3,
                  a.prefill_seconds > 0 ? a.prompt_tokens / a.prefill_seconds : 0.0,
                  static_cast<long long>(a.generated_tokens),
                  a.decode_seconds > 0 ? a.generated_tokens / a.decode_seconds : 0.0);
    std::string out = line;
    if (a.speculative) {
        std::snprintf(line, sizeof line, ", draft accepted %lld/%lld (%.1f%%)",
                      static_cast<long long>(a.accepted_tokens), static_cast<long long>(a.draft_tokens),
                      a.draft_tokens > 0 ? 100.0 * static_cast<double>(a.accepted_tokens) / static_cast<double>(a.draft_tokens)
                                         : 0.0);
        out += line;
    }
    return out;
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
    std::string out = line;
    if (speculator_ != nullptr) {
        std::snprintf(line, sizeof line, "; speculative: %lld steps, accepted %lld of %lld proposed (%.1f%%, %.2f per step)",
                      static_cast<long long>(m.speculative_steps), static_cast<long long>(m.accepted_tokens),
                      static_cast<long long>(m.draft_tokens), 100.0 * m.acceptance_rate(), m.mean_accepted_length());
        out += line;
    }
    return out;
}

}  // namespace ember_chat

namespace ember_chat {
namespace {

// A conversation file is a session state file (Session::save_state_file: checksummed, written
// through a temporary file) whose user data is the history: a count, then role and content of
// each message as length-prefixed strings (u64 little-endian lengths).
void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

std::uint64_t get_u64(const std::string& in, std::size_t& at, const std::string& path) {
    if (in.size() - at < 8) throw ember::Error(path + ": conversation history truncated at byte " + std::to_string(at));
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
    at += 8;
    return v;
}

std::string get_string(const std::string& in, std::size_t& at, const std::string& path) {
    const std::uint64_t n = get_u64(in, at, path);
    if (n > in.size() - at) {
        throw ember::Error(path + ": conversation history string of " + std::to_string(n) + " bytes at byte " +
                           std::to_string(at - 8) + " runs past its end");
    }
    std::string s = in.substr(at, n);
    at += n;
    return s;
}

std::string encode_history(const std::vector<ember::ChatMessage>& history) {
    std::string out;
    put_u64(out, history.size());
    for (const auto& m : history) {
        put_u64(out, m.role.size());
        out += m.role;
        put_u64(out, m.content.size());
        out += m.content;
    }
    return out;
}

std::vector<ember::ChatMessage> decode_history(const std::string& in, const std::string& path) {
    std::size_t at = 0;
    const std::uint64_t n = get_u64(in, at, path);
    if (n > (in.size() - at) / 16) {
        throw ember::Error(path + ": conversation history claims " + std::to_string(n) + " messages");
    }
    std::vector<ember::ChatMessage> history;
    for (std::uint64_t i = 0; i < n; ++i) {
        std::string role = get_string(in, at, path);
        std::string content = get_string(in, at, path);
        history.push_back({std::move(role), std::move(content)});
    }
    if (at != in.size()) throw ember::Error(path + ": conversation history has extra bytes after byte " + std::to_string(at));
    return history;
}

}  // namespace

void save_conversation(Conversation& chat, const std::string& path) {
    chat.session().save_state_file(path, &chat.sampler(), encode_history(chat.history()));
}

void load_conversation(Conversation& chat, const std::string& path) {
    std::string history;
    chat.session().restore_state_file(path, &chat.sampler(), &history);  // checks every byte first
    try {
        chat.history() = decode_history(history, path);
    } catch (...) {
        chat.reset();  // a well-formed state with a malformed history: start afresh
        throw;
    }
}

}  // namespace ember_chat

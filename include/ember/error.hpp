// ember/error.hpp: how ember reports problems.
//
// Three tiers:
//  - Load, configuration and input errors throw ember::Error. The message names the file, the
//    GGUF key or tensor, and the byte offset where that applies, e.g.
//    "model.gguf: tensor 'blk.0.attn_q.weight' at byte 1234: data runs past the end of the file".
//  - A generation step (Session::prefill, Session::decode) returns ember::Status; the token loop
//    never needs a try block for expected conditions (full context, cancellation).
//  - Broken internal invariants are bugs and abort with a message (never reached by bad input).
#pragma once

#include <stdexcept>
#include <string>

#include "ember/export.h"

namespace ember {

/// The single exception type ember throws. `what()` is a complete one-line message of printable
/// UTF-8: bytes it quotes from files (metadata, token text) are escaped as \xNN (ember/text.hpp).
class EMBER_API Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

/// Outcome of a generation step.
enum class Status {
    ok,             ///< The step ran; logits() holds the new distribution.
    context_full,   ///< No room left in the session's context; nothing was changed.
    cancelled,      ///< The cancel callback asked to stop; the session is consistent.
    invalid_input,  ///< A token id outside the vocabulary, or an empty batch; nothing was changed.
    cache_full,     ///< An Engine's KV cache pool cannot hold the request even alone.
};

/// A short name for a Status ("ok", "context_full", ...).
inline const char* to_string(Status s) noexcept {
    switch (s) {
        case Status::ok: return "ok";
        case Status::context_full: return "context_full";
        case Status::cancelled: return "cancelled";
        case Status::invalid_input: return "invalid_input";
        case Status::cache_full: return "cache_full";
    }
    return "unknown";
}

}  // namespace ember

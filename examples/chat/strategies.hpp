// ember-chat --beams and --samples: one prompt answered by beam search, or by N samples decoded
// together (ember/decoding.hpp).
#pragma once

#include "chat_options.hpp"
#include "conversation.hpp"

namespace ember_chat {

/// Prints the prompt (in completion mode) and the winning text on stdout, its log-probability
/// on stderr. Returns the exit code.
int run_beams(const Options& opt, Conversation& chat, bool completion);

/// Prints N samples, each as a lone run with seed S+i prints it, separated by a line "---".
/// Returns the exit code.
int run_samples(const Options& opt, const ember::Model& model, Conversation& chat, bool completion);

}  // namespace ember_chat

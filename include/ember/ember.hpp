// ember/ember.hpp: the whole public API of ember.
//
//   auto model = ember::Model::load("model.gguf", {.threads = 2});
//   ember::Session session(model, {.context = 2048});
//   ember::Sampler sampler({.temperature = 0.0f});
//   session.prefill(model.tokenize("Once upon a time"));
//   for (int i = 0; i < 64; ++i) {
//       ember::Token t = sampler.sample(session.logits());
//       if (model.is_end_of_generation(t)) break;
//       std::cout << session.detokenize_stream(t);
//       if (session.decode(t) != ember::Status::ok) break;
//   }
#pragma once

#include "ember/decoding.hpp"
#include "ember/engine.hpp"
#include "ember/error.hpp"
#include "ember/grammar.hpp"
#include "ember/model.hpp"
#include "ember/sampler.hpp"
#include "ember/session.hpp"
#include "ember/speculative.hpp"
#include "ember/text.hpp"
#include "ember/tool_calls.hpp"
#include "ember/types.hpp"
#include "ember/version.hpp"

// What a Model shares with its Sessions: the mapped file, configuration, prepared weights,
// tokenizer. Immutable after construction.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "chat/chat_template.hpp"
#include "ember/model.hpp"
#include "ember/types.hpp"
#include "gguf/gguf_file.hpp"
#include "grammar/token_trie.hpp"
#include "model/config.hpp"
#include "model/decoder.hpp"
#include "model/weights.hpp"
#include "tokenizer/tokenizer.hpp"

namespace ember::detail {

struct ModelImpl {
    ModelImpl(gguf::File file_in, ModelOptions options_in);
    ~ModelImpl();
    ModelImpl(const ModelImpl&) = delete;
    ModelImpl& operator=(const ModelImpl&) = delete;
    void lock_weights();

    gguf::File file;
    ModelOptions options;
    model::ModelConfig config;
    std::unique_ptr<tokenizer::Tokenizer> tokenizer;  // before weights: built while they load
    model::ModelWeights weights;
    model::Decoder forward;
    ModelInfo info;
    std::string chat_template;
    /// The parsed template (ChatML when the file has none); null when it does not parse, and
    /// then `chat_template_error` says why.
    std::shared_ptr<const chat::ChatTemplate> parsed_template;
    std::string chat_template_error;
    /// Repacked weights locked into RAM (ModelOptions::mlock), unlocked by the destructor.
    std::vector<std::span<const std::uint8_t>> locked;

    /// A hash of every byte of the model file (header, metadata and tensor data), the model
    /// fingerprint saved session states carry. Computed on first use (the first save or
    /// restore of a state), on all threads, then kept.
    std::uint64_t fingerprint() const;

    /// The vocabulary as grammar samplers see it: built on first use (once, thread-safe) and
    /// shared by every grammar sampler of this model.
    std::shared_ptr<const grammar::TokenTrie> grammar_vocab() const;

private:
    mutable std::once_flag fingerprint_once_;
    mutable std::uint64_t fingerprint_ = 0;
    mutable std::once_flag grammar_vocab_once_;
    mutable std::shared_ptr<const grammar::TokenTrie> grammar_vocab_;
};

/// The library's access to a Model's implementation (Model befriends it; its definition is
/// internal, so applications cannot use it).
struct ModelAccess {
    static const std::shared_ptr<const ModelImpl>& impl(const Model& m) noexcept { return m.impl_; }
};

}  // namespace ember::detail

// ember/model.hpp: a loaded model (weights, configuration, tokenizer, chat template).
//
// Thread safety: a Model is immutable after load(). Copies are cheap (they share one loaded
// model) and every const member function may be called from many threads at once, including by
// Sessions running on different threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ember/export.h"
#include "ember/types.hpp"

namespace ember {

namespace detail {
struct ModelImpl;
struct ModelAccess;
}

/// One message of a conversation, for Model::apply_chat_template.
struct ChatMessage {
    std::string role{};     ///< "system", "user" or "assistant".
    std::string content{};
};

class EMBER_API Model {
public:
    /// Loads a GGUF file (memory-mapped; weights are not copied unless a kernel repacks them).
    /// Throws ember::Error naming the file, key or tensor and byte offset when the file is
    /// unreadable, corrupt, truncated, or uses an architecture or tensor type ember does not support.
    static Model load(const std::string& path, ModelOptions options = {});

    /// Loads a GGUF image held in memory. The bytes are copied.
    static Model load_from_memory(const void* data, std::size_t size, ModelOptions options = {});

    const ModelInfo& info() const noexcept;
    const ModelOptions& options() const noexcept;

    // ---- tokenizer ----------------------------------------------------------------------

    /// Text (UTF-8) to token ids.
    std::vector<Token> tokenize(std::string_view text, TokenizeOptions options = {}) const;

    /// Token ids to text. Throws ember::Error for an id outside the vocabulary.
    std::string detokenize(const std::vector<Token>& tokens) const;

    /// The text of one token as it appears inside a longer text (SPM '▁' becomes a space,
    /// byte tokens become their byte). May be part of a UTF-8 sequence.
    std::string token_to_piece(Token token) const;

    std::int64_t n_vocab() const noexcept;
    Token bos() const noexcept;  ///< -1 when the vocabulary has none.
    Token eos() const noexcept;  ///< -1 when the vocabulary has none.
    /// True for tokens that end generation (EOS, EOT, and tokens like <|im_end|>).
    bool is_end_of_generation(Token token) const noexcept;

    // ---- chat template --------------------------------------------------------------------

    /// The Jinja chat template from `tokenizer.chat_template`, or "" when the file has none.
    const std::string& chat_template() const noexcept;
    bool has_chat_template() const noexcept { return !chat_template().empty(); }

    /// Lays out a conversation as the model expects it, with its chat template (Hugging Face
    /// Jinja, rendered as transformers does). `template_override`, when not empty, is used
    /// instead; a model without a template uses ChatML ("<|im_start|>role\ncontent<|im_end|>\n").
    /// With `add_generation_prompt` the text ends with the opening of the assistant's turn.
    /// Throws ember::Error for a template error (with line and column) or raise_exception().
    std::string apply_chat_template(const std::vector<ChatMessage>& messages,
                                    bool add_generation_prompt,
                                    std::string_view template_override = {}) const;

private:
    friend struct detail::ModelAccess;  // the library's own access to the loaded model
    EMBER_HIDDEN explicit Model(std::shared_ptr<const detail::ModelImpl> impl);
    std::shared_ptr<const detail::ModelImpl> impl_;
};

}  // namespace ember

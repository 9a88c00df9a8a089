// ember/model.hpp: a loaded model (weights, configuration, tokenizer, chat template).
//
// Thread safety: a Model is immutable after load(). Copies are cheap (they share one loaded
// model) and every const member function may be called from many threads at once, including by
// Sessions running on different threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/export.h"
#include "ember/types.hpp"

namespace ember {

struct SessionOptions;

namespace detail {
struct ModelImpl;
struct ModelAccess;
}

/// A call of a tool (a function) made by the assistant: one entry of OpenAI's `tool_calls`.
struct ToolCall {
    std::string id{};         ///< The call's id (e.g. "call_0"; may be empty).
    std::string name{};       ///< The function's name.
    /// The arguments as JSON text (e.g. `{"city": "Paris"}`), as OpenAI's API carries them.
    /// Text that parses as JSON reaches the template as that value (the object the Hugging Face
    /// templates expect); other text reaches it as a string.
    std::string arguments{};
};

/// One message of a conversation, for Model::apply_chat_template. Fields left empty are not
/// passed to the template (except role and content, which always are).
struct ChatMessage {
    std::string role{};     ///< "system", "user", "assistant" or "tool".
    std::string content{};  ///< Always a string ("" for an assistant turn that only calls tools).
    /// assistant: the tools it called; each reaches the template as
    /// {"id", "type": "function", "function": {"name", "arguments"}}.
    std::vector<ToolCall> tool_calls{};
    std::string tool_call_id{};       ///< tool: the id of the call this message answers.
    std::string name{};               ///< tool: the function's name (some templates show it).
    std::string reasoning_content{};  ///< assistant: its reasoning (thinking models' templates).
};

/// Options for Model::apply_chat_template.
struct ChatTemplateOptions {
    /// End with the opening of the assistant's turn.
    bool add_generation_prompt = true;
    /// The tools the model may call: a JSON array in OpenAI's format,
    /// `[{"type": "function", "function": {"name": ..., "description": ..., "parameters": {...}}}]`,
    /// passed to the template as `tools`. Empty: no tools (`tools` is undefined, as in
    /// transformers without tools).
    std::string tools{};
    /// More template variables, as a JSON object: e.g. `{"enable_thinking": false}` (Qwen3,
    /// SmolLM3), `{"date_string": "26 Jul 2024"}` (Llama 3.1), `{"documents": [...]}`.
    /// `messages`, `add_generation_prompt`, `bos_token`, `eos_token` and `tools` come from their
    /// own fields.
    std::string variables{};
    /// A Jinja template to use instead of the model's, when not empty.
    std::string template_override{};
};

/// The kind of a GGUF metadata value (Model::metadata_type).
enum class MetadataType {
    absent,    ///< No such key.
    integer,   ///< u8 ... u64, i8 ... i64.
    floating,  ///< f32, f64.
    boolean,
    string,
    array,
};

/// What a model needs in memory, from its file alone (Model::estimate_memory): the weights, the
/// KV cache per token of context for each KV cache type, and a session's other buffers.
struct MemoryEstimate {
    std::int64_t weight_bytes = 0;  ///< Weight tensors as stored (memory-mapped or repacked).
    /// KV cache bytes per token of context (all layers, keys and values) when stored as F32
    /// (ember's cache type today), F16 and Q8_0. Sliding-window layers hold only their window,
    /// so for such models (Gemma 2/3) these and session_bytes are upper bounds.
    std::int64_t kv_bytes_per_token_f32 = 0;
    std::int64_t kv_bytes_per_token_f16 = 0;
    std::int64_t kv_bytes_per_token_q8_0 = 0;
    std::int64_t context = 0;        ///< The context the session figures are for.
    /// One session's buffers other than the KV cache (activations, attention scores, logits,
    /// kernel scratch), for the SessionOptions given: an upper bound.
    std::int64_t scratch_bytes = 0;
    std::int64_t session_bytes = 0;  ///< kv_bytes_per_token_f32 x context + scratch_bytes.
    std::int64_t total_bytes = 0;    ///< weight_bytes + session_bytes (one session).
};

/// Options for Model::embed.
struct EmbedOptions {
    /// How the final hidden states of a text's tokens become one vector.
    enum class Pooling {
        mean,  ///< Their average (sentence-embedding models trained with mean pooling).
        last,  ///< The last token's (decoder models trained with last-token pooling).
    };
    Pooling pooling = Pooling::mean;
    bool normalize = true;  ///< Scale each vector to unit L2 norm (cosine similarity = dot product).
    bool add_bos = true;    ///< As TokenizeOptions::add_bos.
    int threads = 0;        ///< 0: ModelOptions::threads.
    /// Most tokens per forward pass: several short texts share one pass, a longer text runs in
    /// chunks of this many.
    int batch = 512;
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

    /// The same with tools, tool calls and results, and further template variables (see
    /// ChatMessage and ChatTemplateOptions); messages reach the template as transformers passes
    /// them. Throws ember::Error also when `tools` is not a JSON array or `variables` not a JSON
    /// object (naming the option and the position of a syntax error).
    std::string apply_chat_template(const std::vector<ChatMessage>& messages,
                                    const ChatTemplateOptions& options = {}) const;

    // ---- GGUF metadata -------------------------------------------------------------------------

    /// Every metadata key of the file, in file order.
    std::vector<std::string> metadata_keys() const;
    MetadataType metadata_type(std::string_view key) const noexcept;
    /// Typed values: std::nullopt when the key is absent; ember::Error naming the key when it
    /// holds another type (or an integer beyond int64). metadata_float accepts integers too.
    std::optional<std::int64_t> metadata_int(std::string_view key) const;
    std::optional<double> metadata_float(std::string_view key) const;
    std::optional<bool> metadata_bool(std::string_view key) const;
    std::optional<std::string> metadata_string(std::string_view key) const;
    /// Arrays of one element type (e.g. tokenizer.ggml.tokens, tokenizer.ggml.scores).
    std::optional<std::vector<std::int64_t>> metadata_int_array(std::string_view key) const;
    std::optional<std::vector<double>> metadata_float_array(std::string_view key) const;
    std::optional<std::vector<std::string>> metadata_string_array(std::string_view key) const;

    // ---- memory and embeddings --------------------------------------------------------------

    /// What loading `path` and running one session with `session` options (default options
    /// when not given) needs, read from the file's header without loading the weights. A
    /// session with threads = 0 is counted with all hardware threads. Throws ember::Error as
    /// load() does for a file it cannot read, and for invalid options.
    static MemoryEstimate estimate_memory(const std::string& path);
    static MemoryEstimate estimate_memory(const std::string& path, const SessionOptions& session);

    /// One embedding per text: the model's final hidden states (after the output norm, before
    /// the output projection) of the text's tokens, pooled, and L2-normalised by default;
    /// n_embd floats each. Texts share forward passes (batched by EmbedOptions::batch) and get
    /// the same vector as alone. Throws ember::Error for invalid options, an empty text without
    /// BOS, or a text longer than the training context.
    std::vector<std::vector<float>> embed(const std::vector<std::string>& texts,
                                          const EmbedOptions& options = {}) const;
    std::vector<float> embed(std::string_view text, const EmbedOptions& options = {}) const;
    /// The same from token ids (each sequence used as given; add_bos does not apply).
    std::vector<std::vector<float>> embed_tokens(const std::vector<std::vector<Token>>& sequences,
                                                 const EmbedOptions& options = {}) const;

private:
    friend struct detail::ModelAccess;  // the library's own access to the loaded model
    EMBER_HIDDEN explicit Model(std::shared_ptr<const detail::ModelImpl> impl);
    std::shared_ptr<const detail::ModelImpl> impl_;
};

}  // namespace ember

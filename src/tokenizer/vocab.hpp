// The vocabulary shared by every tokenizer: token texts, scores, types, special ids and flags.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ember/types.hpp"

namespace ember::gguf {
class File;
}

namespace ember::tokenizer {

/// GGUF "tokenizer.ggml.token_type" values (the same numbers as sentencepiece's piece types).
enum class TokenType : std::int32_t {
    undefined = 0, normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6,
};

enum class VocabKind { spm, bpe };

/// Hash for string keys that also accepts std::string_view lookups without a copy.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

struct Vocab {
    VocabKind kind = VocabKind::spm;
    std::string name;  ///< File name, for messages.
    std::string pre;   ///< "tokenizer.ggml.pre" (BPE pre-tokenizer name), may be empty.
    std::string model_name;  ///< "general.name" in lower case (llama.cpp keys token rules on it).

    std::vector<std::string> tokens;
    std::vector<float> scores;     ///< One per token (0 when the file has none).
    std::vector<TokenType> types;  ///< One per token.
    std::vector<std::string> merges;  ///< BPE only: "left right", rank = index.

    Token bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, pad = -1, sep = -1;
    bool add_bos = false;
    bool add_eos = false;
    bool add_space_prefix = false;        ///< SPM dummy prefix.
    bool remove_extra_whitespaces = false;

    // Derived by finalize().
    std::unordered_map<std::string, Token, StringHash, std::equal_to<>> to_id;
    std::vector<Token> specials;      ///< Control, user-defined, unknown; longest text first.
    std::vector<std::uint8_t> eog;    ///< 1 for end-of-generation tokens.
    /// Per token: kStripLeft / kStripRight when matching it as a special token in text also
    /// removes the whitespace before / after it (llama.cpp's LSTRIP / RSTRIP attributes, which
    /// it sets by model: every special token of Phi-3 models strips to its right except
    /// <unk>, <s> and <|endoftext|>; <mask> of jina-v2 strips to its left).
    std::vector<std::uint8_t> strip;
    static constexpr std::uint8_t kStripLeft = 1, kStripRight = 2;

    /// Validates (non-empty unique texts, ids in range, byte tokens well formed, flags that need
    /// an id) and builds the derived tables. Throws ember::Error naming `name` and `where`.
    void finalize(const std::string& where);
};

/// Reads the "tokenizer.ggml.*" keys of a GGUF file (not yet finalized: callers finalize).
Vocab read_gguf_vocab(const gguf::File& file);

/// "<0x0A>" -> 10; -1 when `text` is not a byte token text.
int parse_byte_token(std::string_view text) noexcept;

}  // namespace ember::tokenizer

// Text <-> token ids for the two vocabulary families GGUF files carry:
//  - SPM ("tokenizer.ggml.model" == "llama"): SentencePiece BPE with byte fallback, run by the
//    sentencepiece library on a model built from the GGUF arrays (or read from a .model file);
//  - byte-level BPE ("gpt2"): GPT-2 byte-to-unicode mapping, a regex pre-tokenizer chosen by
//    "tokenizer.ggml.pre" (PCRE2) and ranked merges.
// Behaviour follows llama.cpp (special-token splitting, dummy-prefix rule, end-of-generation
// tokens); see docs/tokenizers.md.
//
// Thread safety: a Tokenizer is immutable after construction; every const member function may
// be called from many threads at once. A StreamDecoder belongs to one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ember/types.hpp"
#include "tokenizer/vocab.hpp"

namespace ember::gguf {
class File;
}

namespace ember::tokenizer {

class Tokenizer {
public:
    /// Builds the tokenizer a GGUF file describes. Throws ember::Error naming the file, the key
    /// and its byte offset for a missing, mistyped or inconsistent vocabulary.
    static std::unique_ptr<Tokenizer> from_gguf(const gguf::File& file);
    /// Loads a sentencepiece .model file (SPM only). Throws ember::Error.
    static std::unique_ptr<Tokenizer> from_spm_model(const std::string& path);
    /// Same, from the serialized ModelProto bytes; `name` is used in error messages.
    static std::unique_ptr<Tokenizer> from_spm_proto(std::string_view serialized,
                                                     const std::string& name = "<memory>");

    virtual ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    /// Text (any bytes; UTF-8 expected) to ids. `add_bos` adds the special tokens the vocabulary
    /// asks for, as llama.cpp's add_special: BOS when add_bos_default(), EOS when
    /// add_eos_default() (so Qwen2 gets no BOS, Llama gets one). With `parse_special`, control
    /// tokens written in the text (e.g. "<|im_start|>") become their ids; user-defined tokens are
    /// always matched whole, as llama.cpp and Hugging Face do.
    virtual std::vector<Token> encode(std::string_view text, bool add_bos,
                                      bool parse_special) const = 0;

    /// The text of one token inside a longer text: SPM '▁' becomes ' ', byte tokens become their
    /// byte, BPE byte-level characters become their bytes. Control and unknown tokens give ""
    /// unless `special` (then their written form, e.g. "</s>"). Throws for an id out of range.
    std::string token_to_piece(Token id) const { return token_to_piece(id, false); }
    std::string token_to_piece(Token id, bool special) const;
    /// Same without a copy (valid while the Tokenizer lives).
    const std::string& piece_ref(Token id, bool special = false) const;

    /// Concatenated pieces. For vocabularies with a dummy prefix (SPM) one leading space of the
    /// first non-empty piece is removed, so decode(encode(s)) == s. Throws for an id out of range.
    std::string decode(std::span<const Token> ids, bool special = false) const;

    std::int64_t n_vocab() const noexcept { return static_cast<std::int64_t>(vocab_.tokens.size()); }
    Token bos() const noexcept { return vocab_.bos; }
    Token eos() const noexcept { return vocab_.eos; }
    Token eot() const noexcept { return vocab_.eot; }
    Token unk() const noexcept { return vocab_.unk; }
    Token pad() const noexcept { return vocab_.pad; }
    bool add_bos_default() const noexcept { return vocab_.add_bos; }
    bool add_eos_default() const noexcept { return vocab_.add_eos; }
    /// True when decode() strips one leading space (SPM dummy prefix).
    bool strips_leading_space() const noexcept { return vocab_.add_space_prefix; }

    /// EOS, EOT, EOM and the control tokens llama.cpp treats as end of generation by their text
    /// (<|im_end|>, <|eot_id|>, <|end_of_text|>, <|endoftext|>, <end_of_turn>, ...).
    bool is_end_of_generation(Token id) const noexcept;
    bool is_control(Token id) const noexcept;
    TokenType token_type(Token id) const;  ///< Throws for an id out of range.
    /// The token's stored text (e.g. "▁Hello", "Ġworld", "<0x0A>"). Throws for an id out of range.
    const std::string& token_text(Token id) const;
    /// The id whose stored text is exactly `text`, or -1.
    Token find_token(std::string_view text) const;

    const Vocab& vocab() const noexcept { return vocab_; }

protected:
    explicit Tokenizer(Vocab vocab);

    /// A piece of the input: raw text, or a special token matched whole.
    struct Fragment {
        std::string_view text;  ///< Raw text (empty when `token` >= 0).
        Token token = -1;
    };
    /// Splits out special tokens the way llama.cpp does: longest token text first, every
    /// occurrence; control/unknown tokens only with `parse_special`, user-defined always.
    std::vector<Fragment> split_special(std::string_view text, bool parse_special) const;
    void check_id(Token id) const;

    Vocab vocab_;

private:
    void build_piece_cache();
    std::vector<std::string> pieces_;          ///< token_to_piece(id, false)
    std::vector<std::string> pieces_special_;  ///< token_to_piece(id, true)
};

/// UTF-8 safe streaming detokenization: push() returns the text that is complete so far and
/// holds back an incomplete multi-byte sequence until its last byte arrives. Invalid bytes come
/// out as U+FFFD once they are provably invalid (or at flush()). With `strip_leading_space`
/// (default) the first non-empty piece loses one leading space exactly as Tokenizer::decode.
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer& tokenizer, bool strip_leading_space = true,
                           bool special = false);
    /// Text ready after `id` (may be empty). Throws ember::Error for an id out of range.
    std::string push(Token id);
    /// Whatever is held back, with an incomplete sequence replaced by U+FFFD.
    std::string flush();
    /// Forgets held-back bytes and restarts the leading-space rule.
    void reset();

private:
    const Tokenizer* tokenizer_;
    bool strip_;
    bool special_;
    bool at_start_ = true;
    std::string pending_;
};

}  // namespace ember::tokenizer

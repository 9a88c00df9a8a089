// Regex pre-tokenizers of byte-level BPE vocabularies, chosen by "tokenizer.ggml.pre" with the
// regexes llama.cpp uses for each name (PCRE2, UTF + UCP, JIT). A list of several regexes is
// applied in turn, each splitting the pieces the previous one produced; text a regex does not
// match stays a piece of its own (as llama.cpp's unicode_regex_split).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ember::tokenizer {

class PreTokenizer {
public:
    /// Unknown names fall back to the GPT-2 regex with a warning on stderr (once per name);
    /// an empty name uses llama.cpp's "default" list, also with a warning.
    PreTokenizer(std::string_view pre, const std::string& file_name);
    ~PreTokenizer();
    PreTokenizer(const PreTokenizer&) = delete;
    PreTokenizer& operator=(const PreTokenizer&) = delete;

    /// Appends the words of `text` (views into it, in order, covering all of it).
    void split(std::string_view text, std::vector<std::string_view>& words) const;

    /// llama.cpp's ignore_merges flag for this pre-tokenizer (Llama 3, Tekken): a word that is
    /// itself a token is emitted whole without running the merges.
    bool ignore_merges() const noexcept { return ignore_merges_; }
    /// The regex list in use (for tests and docs).
    const std::vector<std::string>& patterns() const noexcept { return patterns_; }

private:
    struct Compiled;
    std::vector<std::unique_ptr<Compiled>> regexes_;
    std::vector<std::string> patterns_;
    bool ignore_merges_ = false;
};

}  // namespace ember::tokenizer

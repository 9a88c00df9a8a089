#include "speculative/vocab_match.hpp"

#include <algorithm>

#include "runtime/fail.hpp"

namespace ember::speculative {
namespace {

const char* type_name(tokenizer::TokenType t) {
    switch (t) {
        case tokenizer::TokenType::undefined: return "undefined";
        case tokenizer::TokenType::normal: return "normal";
        case tokenizer::TokenType::unknown: return "unknown";
        case tokenizer::TokenType::control: return "control";
        case tokenizer::TokenType::user_defined: return "user-defined";
        case tokenizer::TokenType::unused: return "unused";
        case tokenizer::TokenType::byte: return "byte";
    }
    return "?";
}

// The token's text with control bytes escaped (messages stay one printable line), and type.
std::string describe(const tokenizer::Tokenizer& t, Token id) {
    std::string text;
    for (const char c : t.token_text(id)) {
        const auto b = static_cast<unsigned char>(c);
        if (b < 0x20 || b == 0x7F) {
            static const char* const kHex = "0123456789ABCDEF";
            text += "\\x";
            text += kHex[b >> 4];
            text += kHex[b & 15];
        } else {
            text += c;
        }
    }
    return "'" + text + "' (" + type_name(t.token_type(id)) + ")";
}

}  // namespace

void check_vocab_match(const tokenizer::Tokenizer& draft, const tokenizer::Tokenizer& target,
                       const std::string& draft_name, const std::string& target_name) {
    const std::string what = "draft model " + draft_name + " cannot draft for " + target_name + ": ";
    const std::int64_t n_draft = draft.n_vocab(), n_target = target.n_vocab();
    const std::int64_t common = std::min(n_draft, n_target);
    if (std::max(n_draft, n_target) - common > kMaxVocabPadding) {
        fail(what + "vocabularies of " + std::to_string(n_draft) + " and " + std::to_string(n_target) +
             " tokens (a draft model needs the target's vocabulary)");
    }
    for (Token id = 0; id < common; ++id) {
        if (draft.token_text(id) != target.token_text(id) || draft.token_type(id) != target.token_type(id)) {
            fail(what + "token " + std::to_string(id) + " is " + describe(draft, id) + " in the draft and " +
                 describe(target, id) + " in the target (a draft model needs the target's vocabulary)");
        }
    }
    const tokenizer::Tokenizer& larger = n_draft > n_target ? draft : target;
    for (Token id = static_cast<Token>(common); id < larger.n_vocab(); ++id) {
        if (larger.token_type(id) != tokenizer::TokenType::unused) {
            fail(what + "token " + std::to_string(id) + " " + describe(larger, id) + " exists only in the " +
                 (n_draft > n_target ? "draft" : "target") + " (only unused padding tokens may differ)");
        }
    }
}

}  // namespace ember::speculative

// Helpers for the grammar tests: a vocabulary of the 256 single bytes (plus one
// end-of-generation token) so that any text can be fed to a Matcher byte by byte.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.hpp"
#include "grammar/matcher.hpp"
#include "grammar/token_trie.hpp"

namespace grammar_test {

inline constexpr ember::Token kEog = 256;

inline std::shared_ptr<const ember::grammar::TokenTrie> byte_vocab() {
    static const auto trie = [] {
        std::vector<std::string> pieces(257);
        std::vector<std::uint8_t> eog(257, 0);
        for (int b = 0; b < 256; ++b) pieces[static_cast<std::size_t>(b)] = std::string(1, static_cast<char>(b));
        eog[256] = 1;
        return ember::grammar::build_token_trie(pieces, eog);
    }();
    return trie;
}

inline ember::grammar::Matcher byte_matcher(std::string_view gbnf) {
    return ember::grammar::Matcher(
        std::make_shared<const ember::grammar::Grammar>(ember::grammar::parse_gbnf(gbnf)), byte_vocab());
}

enum class Match { complete, prefix, rejected };

/// Feeds `text` byte by byte: rejected as soon as a byte is not allowed; else complete when the
/// grammar can end there, prefix when it needs more.
inline Match run(ember::grammar::Matcher& m, std::string_view text) {
    for (char c : text) {
        const auto t = static_cast<ember::Token>(static_cast<unsigned char>(c));
        if (!m.allows(t)) return Match::rejected;
        m.accept(t);
    }
    return m.can_end() ? Match::complete : Match::prefix;
}

inline Match run(std::string_view gbnf, std::string_view text) {
    auto m = byte_matcher(gbnf);
    return run(m, text);
}

inline bool accepts(std::string_view gbnf, std::string_view text) { return run(gbnf, text) == Match::complete; }

}  // namespace grammar_test

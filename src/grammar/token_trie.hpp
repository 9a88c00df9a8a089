// The vocabulary as the grammar matcher sees it: every token's text (its piece, the bytes it
// adds to the output) in a byte trie laid out in depth-first preorder, so that a mask is one
// forward scan that jumps over the subtree of a rejected prefix. Built once per vocabulary and
// shared (immutable) by every grammar sampler of a Model.
//
// Tokens that end generation are not in the trie (the matcher allows them only where the
// grammar can end), nor are tokens whose piece is empty (control tokens): they add no text, so
// a grammar can neither require nor allow them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ember/types.hpp"

namespace ember::tokenizer {
class Tokenizer;
}

namespace ember::grammar {

struct TokenTrie {
    // Node i (0 = the root, the empty prefix) in depth-first preorder.
    std::vector<std::uint8_t> byte;          ///< Last byte of node i's prefix.
    std::vector<std::uint32_t> depth;        ///< Length of node i's prefix.
    std::vector<std::uint32_t> subtree_end;  ///< First node after node i's subtree.
    std::vector<std::uint32_t> token_begin;  ///< Tokens ending at node i: ids[token_begin[i] ..
                                             ///< token_begin[i + 1]) (one extra entry at the end).
    std::vector<Token> ids;

    std::size_t n_vocab = 0;
    std::uint32_t max_depth = 0;
    std::vector<std::uint8_t> eog;            ///< Per token: ends generation.
    std::vector<std::uint32_t> piece_offset;  ///< Per token (+1): its piece in `pieces`.
    std::string pieces;

    std::size_t n_nodes() const noexcept { return byte.size(); }
    std::string_view piece(Token t) const noexcept {
        const auto i = static_cast<std::size_t>(t);
        return std::string_view(pieces).substr(piece_offset[i], piece_offset[i + 1] - piece_offset[i]);
    }
};

/// Builds the trie from each token's piece (index = token id) and end-of-generation flag.
std::shared_ptr<const TokenTrie> build_token_trie(std::span<const std::string> pieces,
                                                  std::span<const std::uint8_t> eog);

/// The same from a tokenizer: pieces as Tokenizer::piece_ref(id, special = false) gives them
/// (the text a Session streams out), end of generation as is_end_of_generation().
std::shared_ptr<const TokenTrie> build_token_trie(const tokenizer::Tokenizer& tokenizer);

}  // namespace ember::grammar

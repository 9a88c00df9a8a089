#include "grammar/token_trie.hpp"

#include <algorithm>
#include <numeric>

#include "runtime/fail.hpp"
#include "tokenizer/tokenizer.hpp"

namespace ember::grammar {

std::shared_ptr<const TokenTrie> build_token_trie(std::span<const std::string> pieces,
                                                  std::span<const std::uint8_t> eog) {
    EMBER_ASSERT(pieces.size() == eog.size());
    auto trie = std::make_shared<TokenTrie>();
    TokenTrie& t = *trie;
    t.n_vocab = pieces.size();
    t.eog.assign(eog.begin(), eog.end());
    t.piece_offset.reserve(pieces.size() + 1);
    for (const std::string& p : pieces) {
        t.piece_offset.push_back(static_cast<std::uint32_t>(t.pieces.size()));
        t.pieces += p;
    }
    t.piece_offset.push_back(static_cast<std::uint32_t>(t.pieces.size()));
    if (t.pieces.size() > 0xFFFFFFFFu) fail("vocabulary pieces too large for the grammar trie");

    std::vector<Token> order;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        if (!eog[i] && !pieces[i].empty()) order.push_back(static_cast<Token>(i));
    }
    // std::string_view compares bytes as unsigned char: the sort is the trie's byte order.
    std::sort(order.begin(), order.end(), [&](Token a, Token b) {
        const std::string_view pa = t.piece(a), pb = t.piece(b);
        return pa < pb || (pa == pb && a < b);
    });

    // Preorder construction: `path[d]` is the node of the current prefix of length d.
    auto add_node = [&](std::uint8_t byte, std::uint32_t depth) {
        t.byte.push_back(byte);
        t.depth.push_back(depth);
        t.subtree_end.push_back(0);
        t.token_begin.push_back(static_cast<std::uint32_t>(t.ids.size()));
        t.max_depth = std::max(t.max_depth, depth);
        return static_cast<std::uint32_t>(t.byte.size() - 1);
    };
    std::vector<std::uint32_t> path{add_node(0, 0)};
    std::string_view prev;
    for (Token id : order) {
        const std::string_view p = t.piece(id);
        std::size_t common = 0;
        while (common < prev.size() && common < p.size() && prev[common] == p[common]) ++common;
        while (path.size() > common + 1) {  // close the nodes past the shared prefix
            t.subtree_end[path.back()] = static_cast<std::uint32_t>(t.byte.size());
            path.pop_back();
        }
        for (std::size_t d = common; d < p.size(); ++d) {
            path.push_back(add_node(static_cast<std::uint8_t>(p[d]), static_cast<std::uint32_t>(d + 1)));
        }
        t.ids.push_back(id);  // belongs to path.back(): its tokens are contiguous in `ids`
        prev = p;
    }
    while (!path.empty()) {
        t.subtree_end[path.back()] = static_cast<std::uint32_t>(t.byte.size());
        path.pop_back();
    }
    t.token_begin.push_back(static_cast<std::uint32_t>(t.ids.size()));
    return trie;
}

std::shared_ptr<const TokenTrie> build_token_trie(const tokenizer::Tokenizer& tokenizer) {
    const auto n = static_cast<std::size_t>(tokenizer.n_vocab());
    std::vector<std::string> pieces(n);
    std::vector<std::uint8_t> eog(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto id = static_cast<Token>(i);
        pieces[i] = tokenizer.piece_ref(id, false);
        eog[i] = tokenizer.is_end_of_generation(id) ? 1 : 0;
    }
    return build_token_trie(pieces, eog);
}

}  // namespace ember::grammar

// ModelImpl::grammar_vocab: the token trie for grammar samplers, built lazily because only
// grammar-constrained sampling needs it (about 1 MB and a few ms for a 32k vocabulary).
#include "api/model_impl.hpp"

namespace ember::detail {

std::shared_ptr<const grammar::TokenTrie> ModelImpl::grammar_vocab() const {
    std::call_once(grammar_vocab_once_, [this] { grammar_vocab_ = grammar::build_token_trie(*tokenizer); });
    return grammar_vocab_;
}

}  // namespace ember::detail

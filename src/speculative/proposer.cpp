#include "speculative/proposer.hpp"

#include "speculative/ngram_lookup.hpp"

namespace ember::speculative {

Status LookupProposer::propose(const ProposeRequest& req, Proposal& out) {
    const std::size_t first = out.tokens.size();
    lookup_ngram(req.context, max_ngram_, req.max, out.tokens);
    // Stop after a token that ends generation: nothing after it would be used.
    for (std::size_t i = first; i < out.tokens.size(); ++i) {
        if (req.ends && req.ends(out.tokens[i])) {
            out.tokens.resize(i + 1);
            break;
        }
    }
    return Status::ok;
}

}  // namespace ember::speculative

#include "speculative/ngram_lookup.hpp"

#include <algorithm>
#include <cstddef>

namespace ember::speculative {

int lookup_ngram(std::span<const Token> context, int max_ngram, int max, std::vector<Token>& out) {
    const std::size_t len = context.size();
    if (max <= 0 || len < 2) return 0;
    const std::size_t first = out.size();
    for (std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(std::max(max_ngram, 0)), len - 1); n >= 1; --n) {
        const std::span<const Token> suffix = context.subspan(len - n);
        // Latest start s < len - n whose n tokens equal the suffix (then context[s + n] exists).
        for (std::size_t s = len - n; s-- > 0;) {
            if (!std::equal(suffix.begin(), suffix.end(), context.begin() + static_cast<std::ptrdiff_t>(s))) continue;
            for (std::size_t j = 0; j < static_cast<std::size_t>(max); ++j) {
                const std::size_t at = s + n + j;  // < len + j: the context, then the guess so far
                out.push_back(at < len ? context[at] : out[first + (at - len)]);
            }
            return max;
        }
    }
    return 0;
}

}  // namespace ember::speculative

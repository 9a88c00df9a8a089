#include "decoding/beam_select.hpp"

#include <algorithm>

#include "sampling/log_softmax.hpp"

namespace ember::decoding {

bool ahead(const Extension& a, const Extension& b) noexcept {
    if (a.logprob != b.logprob) return a.logprob > b.logprob;
    if (a.token != b.token) return a.token < b.token;
    return a.hyp < b.hyp;
}

std::vector<Extension> select_beams(std::span<const double> logprob,
                                    const std::function<std::span<const float>(std::size_t)>& logits,
                                    std::size_t beams, std::vector<Extension>& row) {
    // The overall best `beams` are among each hypothesis's own best `beams`.
    std::vector<Extension> best;
    best.reserve(beams * logprob.size());
    for (std::size_t h = 0; h < logprob.size(); ++h) {
        const std::span<const float> l = logits(h);
        const double log_z = sampling::log_normalizer(l, "beam_search");
        row.resize(l.size());
        for (std::size_t t = 0; t < l.size(); ++t) {
            row[t] = {logprob[h] + (static_cast<double>(l[t]) - log_z), static_cast<Token>(t), static_cast<std::int32_t>(h)};
        }
        const auto k = static_cast<std::ptrdiff_t>(std::min(beams, row.size()));
        std::partial_sort(row.begin(), row.begin() + k, row.end(), ahead);
        best.insert(best.end(), row.begin(), row.begin() + k);
    }
    const auto k = static_cast<std::ptrdiff_t>(std::min(beams, best.size()));
    std::partial_sort(best.begin(), best.begin() + k, best.end(), ahead);
    best.resize(static_cast<std::size_t>(k));
    return best;
}

}  // namespace ember::decoding

// ember::logprobs: log-softmax of raw logits and the top-n tokens, in one pass over the
// vocabulary plus a heap of n entries.
#include <algorithm>
#include <cmath>
#include <string>

#include "ember/sampler.hpp"
#include "runtime/fail.hpp"
#include "sampling/log_softmax.hpp"

namespace ember {
namespace {

// Ranks a ahead of b: higher logit, then lower id.
bool ahead(const TokenLogprob& a, const TokenLogprob& b) noexcept {
    return a.logprob > b.logprob || (a.logprob == b.logprob && a.token < b.token);
}

}  // namespace

namespace sampling {

double log_normalizer(std::span<const float> logits, const char* who) {
    const std::string name(who);
    if (logits.empty()) fail(name + ": no logits");
    float max = -INFINITY;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        const float l = logits[i];
        if (std::isnan(l) || l == INFINITY) fail(name + ": logit " + std::to_string(i) + " is " + std::to_string(l));
        max = std::max(max, l);
    }
    if (max == -INFINITY) fail(name + ": every logit is -INFINITY");
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max);
    return static_cast<double>(max) + std::log(sum);
}

}  // namespace sampling

TokenLogprobs logprobs(std::span<const float> logits, Token token, int top_n) {
    const auto n = static_cast<std::int64_t>(logits.size());
    if (n == 0) fail("logprobs: no logits");
    if (token < 0 || token >= n) {
        fail("logprobs: token " + std::to_string(token) + " is outside [0, " + std::to_string(n) + ")");
    }
    if (top_n < 0) fail("logprobs: top_n must be >= 0, got " + std::to_string(top_n));
    const double log_z = sampling::log_normalizer(logits, "logprobs");
    auto logprob = [&](float l) { return static_cast<float>(static_cast<double>(l) - log_z); };

    TokenLogprobs out;
    out.token = token;
    out.logprob = logprob(logits[static_cast<std::size_t>(token)]);
    const auto k = static_cast<std::size_t>(std::min<std::int64_t>(top_n, n));
    if (k == 0) return out;
    // A heap of the k best seen so far, worst on top; ranked by raw logit, converted at the end.
    std::vector<TokenLogprob>& top = out.top;
    top.reserve(k);
    for (std::int64_t i = 0; i < n; ++i) {
        const TokenLogprob c{static_cast<Token>(i), logits[static_cast<std::size_t>(i)]};
        if (top.size() < k) {
            top.push_back(c);
            std::push_heap(top.begin(), top.end(), ahead);
        } else if (ahead(c, top.front())) {
            std::pop_heap(top.begin(), top.end(), ahead);
            top.back() = c;
            std::push_heap(top.begin(), top.end(), ahead);
        }
    }
    std::sort_heap(top.begin(), top.end(), ahead);
    for (TokenLogprob& t : top) t.logprob = logprob(t.logprob);
    return out;
}

}  // namespace ember

#include "sampling/stages.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ember::sampling {
namespace {

// Below this many candidates top-p sorts them all; above it, it first orders only the top
// kTopPFirstPass and sorts the rest only if their probability does not reach p.
constexpr std::size_t kTopPFullSortBelow = 1024;
constexpr std::size_t kTopPFirstPass = 256;
// Up to this k, top-k uses a heap-based partial_sort; above it, nth_element then sort.
constexpr int kTopKHeapLimit = 128;

float max_logit(const CandidateArray& cur) {
    if (cur.sorted) return cur.data[0].logit;
    float m = -std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < cur.size; ++i) m = std::max(m, cur.data[i].logit);
    return m;
}

}  // namespace

void apply_logit_bias(CandidateArray& cur, std::span<const std::pair<Token, float>> bias,
                      std::span<const float> dense_bias) {
    if (bias.empty()) return;
    if (cur.identity) {
        for (const auto& [token, value] : bias) {
            if (static_cast<std::size_t>(token) < cur.size) cur.data[token].logit += value;
        }
    } else {
        for (std::size_t i = 0; i < cur.size; ++i) {
            const auto token = static_cast<std::size_t>(cur.data[i].token);
            if (token < dense_bias.size()) cur.data[i].logit += dense_bias[token];
        }
    }
    cur.sorted = false;
}

void apply_penalties(CandidateArray& cur, const PenaltyHistory& history, const PenaltyParams& p,
                     std::span<std::int32_t> counts) {
    if (history.size() == 0 || (p.repeat == 1.0f && p.frequency == 0.0f && p.presence == 0.0f)) {
        return;
    }
    const std::size_t n_counts = counts.size();
    for (std::size_t i = 0; i < history.size(); ++i) {
        const auto t = static_cast<std::size_t>(history[i]);
        if (t < n_counts) ++counts[t];
    }
    const auto penalize = [&p](SampleCandidate& c, std::int32_t count) {
        c.logit = penalized(c.logit, count, p);
    };
    if (cur.identity) {
        // Each distinct history token once, straight to its slot; clearing its count as we go.
        for (std::size_t i = 0; i < history.size(); ++i) {
            const auto t = static_cast<std::size_t>(history[i]);
            if (t < n_counts && counts[t] > 0) {
                if (t < cur.size) penalize(cur.data[t], counts[t]);
                counts[t] = 0;
            }
        }
    } else {
        for (std::size_t i = 0; i < cur.size; ++i) {
            const auto t = static_cast<std::size_t>(cur.data[i].token);
            if (t < n_counts && counts[t] > 0) penalize(cur.data[i], counts[t]);
        }
        for (std::size_t i = 0; i < history.size(); ++i) {
            const auto t = static_cast<std::size_t>(history[i]);
            if (t < n_counts) counts[t] = 0;
        }
    }
    cur.sorted = false;
}

void apply_penalties(std::span<float> logits, const PenaltyHistory& history,
                     const PenaltyParams& p, std::span<std::int32_t> counts) {
    if (history.size() == 0 || (p.repeat == 1.0f && p.frequency == 0.0f && p.presence == 0.0f)) {
        return;
    }
    const std::size_t n = std::min(counts.size(), logits.size());
    for (std::size_t i = 0; i < history.size(); ++i) {
        const auto t = static_cast<std::size_t>(history[i]);
        if (t < n) ++counts[t];
    }
    for (std::size_t i = 0; i < history.size(); ++i) {
        const auto t = static_cast<std::size_t>(history[i]);
        if (t < n && counts[t] > 0) {
            logits[t] = penalized(logits[t], counts[t], p);
            counts[t] = 0;
        }
    }
}

void apply_top_k(CandidateArray& cur, int k) {
    if (k <= 0 || static_cast<std::size_t>(k) >= cur.size) return;
    if (!cur.sorted) {
        SampleCandidate* first = cur.data;
        SampleCandidate* end = cur.data + cur.size;
        if (k <= kTopKHeapLimit) {
            std::partial_sort(first, first + k, end, ranks_before);
        } else {
            std::nth_element(first, first + k, end, ranks_before);
            std::sort(first, first + k, ranks_before);
        }
    }
    cur.size = static_cast<std::size_t>(k);
    cur.sorted = true;
    cur.identity = false;
}

void apply_top_p(CandidateArray& cur, float p) {
    if (p >= 1.0f || cur.size == 0) return;
    softmax(cur);
    SampleCandidate* data = cur.data;
    std::size_t n_ordered = cur.size;
    if (!cur.sorted) {
        n_ordered = cur.size < kTopPFullSortBelow ? cur.size : kTopPFirstPass;
        std::partial_sort(data, data + n_ordered, data + cur.size, ranks_before);
    }
    float cum = 0.0f;
    std::size_t keep = cur.size;
    for (std::size_t i = 0; i < cur.size; ++i) {
        if (i == n_ordered) {  // the first pass was not enough: order the rest too
            std::sort(data + i, data + cur.size, ranks_before);
            n_ordered = cur.size;
        }
        cum += data[i].probability;
        if (cum >= p) {
            keep = i + 1;
            break;
        }
    }
    cur.size = keep;
    cur.sorted = true;
    cur.identity = false;
}

void apply_min_p(CandidateArray& cur, float p) {
    if (p <= 0.0f || cur.size == 0) return;
    const float threshold = max_logit(cur) + std::log(p);  // p_i >= p * p_max
    std::size_t n = 0;
    for (std::size_t i = 0; i < cur.size; ++i) {
        if (cur.data[i].logit >= threshold) cur.data[n++] = cur.data[i];
    }
    if (n == 0) {  // p > 1: nothing passed (and nothing moved); keep the top candidate
        cur.data[0] = cur.data[argmax(cur)];
        n = 1;
    }
    if (n != cur.size) cur.identity = false;
    cur.size = n;
}

void apply_typical_p(CandidateArray& cur, float p, const TypicalScratch& scratch) {
    if (p >= 1.0f || cur.size == 0) return;
    softmax(cur);
    const float h = entropy(cur);
    auto* scored = scratch.scored.data();
    for (std::size_t i = 0; i < cur.size; ++i) {
        const float pi = cur.data[i].probability;
        const float score = pi > 0.0f ? std::fabs(-std::log(pi) - h)
                                      : std::numeric_limits<float>::infinity();
        scored[i] = {score, static_cast<std::uint32_t>(i)};
    }
    const SampleCandidate* data = cur.data;
    std::sort(scored, scored + cur.size, [data](const auto& a, const auto& b) {
        if (a.score != b.score) return a.score < b.score;
        return ranks_before(data[a.index], data[b.index]);
    });
    float cum = 0.0f;
    std::size_t keep = cur.size;
    for (std::size_t i = 0; i < cur.size; ++i) {
        cum += data[scored[i].index].probability;
        if (cum > p) {
            keep = i + 1;
            break;
        }
    }
    auto* reordered = scratch.reordered.data();
    for (std::size_t i = 0; i < keep; ++i) reordered[i] = data[scored[i].index];
    std::copy(reordered, reordered + keep, cur.data);
    cur.size = keep;
    cur.sorted = false;
    cur.identity = false;
}

void apply_temperature(CandidateArray& cur, float t) {
    for (std::size_t i = 0; i < cur.size; ++i) cur.data[i].logit /= t;
}

void softmax(CandidateArray& cur) {
    const float m = max_logit(cur);
    double sum = 0.0;
    for (std::size_t i = 0; i < cur.size; ++i) {
        const float e = std::exp(cur.data[i].logit - m);
        cur.data[i].probability = e;
        sum += e;
    }
    const double inv = 1.0 / sum;
    for (std::size_t i = 0; i < cur.size; ++i) {
        cur.data[i].probability = static_cast<float>(cur.data[i].probability * inv);
    }
}

std::size_t argmax(const CandidateArray& cur) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < cur.size; ++i) {
        if (ranks_before(cur.data[i], cur.data[best])) best = i;
    }
    return best;
}

std::size_t draw(const CandidateArray& cur, double u) {
    double total = 0.0;
    for (std::size_t i = 0; i < cur.size; ++i) total += cur.data[i].probability;
    const double target = u * total;
    double cum = 0.0;
    std::size_t last_nonzero = 0;
    for (std::size_t i = 0; i < cur.size; ++i) {
        const float pi = cur.data[i].probability;
        if (pi <= 0.0f) continue;
        last_nonzero = i;
        cum += pi;
        if (cum > target) return i;
    }
    return last_nonzero;  // rounding left the target past the sum
}

float entropy(const CandidateArray& cur) {
    double h = 0.0;
    for (std::size_t i = 0; i < cur.size; ++i) {
        const double pi = cur.data[i].probability;
        if (pi > 0.0) h -= pi * std::log(pi);
    }
    return static_cast<float>(h);
}

}  // namespace ember::sampling

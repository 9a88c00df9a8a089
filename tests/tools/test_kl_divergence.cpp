// The KL-divergence helpers of ember-perplexity: llama.cpp's 16-bit log-probability rows, the
// base file's checks, and the statistics on distributions with known answers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "common/kl_divergence.hpp"
#include "ember/error.hpp"

using namespace ember::tools;

namespace {

std::vector<float> random_logits(int n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 3.0f);
    std::vector<float> l(static_cast<std::size_t>(n));
    for (auto& v : l) v = d(rng);
    return l;
}

std::vector<double> log_softmax(const std::vector<float>& l) {
    double m = l[0];
    for (float v : l) m = std::max<double>(m, v);
    double s = 0;
    for (float v : l) s += std::exp(v - m);
    std::vector<double> out;
    for (float v : l) out.push_back(v - m - std::log(s));
    return out;
}

}  // namespace

TEST_CASE("kl-divergence: a stored row gives the log-probabilities back within half a step", "[kld]") {
    const int n = 513;  // odd: the row is padded to an even number of words
    REQUIRE(log_prob_row_words(n) == 518);
    const auto logits = random_logits(n, 1);
    std::vector<std::uint16_t> row(static_cast<std::size_t>(log_prob_row_words(n)));
    const double nll = compress_log_probs(logits, 7, row);
    const auto lp = log_softmax(logits);
    CHECK(nll == Approx(-lp[7]).epsilon(1e-5));
    float scale, min_lp;
    std::memcpy(&scale, row.data(), 4);
    std::memcpy(&min_lp, row.data() + 2, 4);
    double worst = 0;
    for (int i = 0; i < n; ++i) {
        if (lp[static_cast<std::size_t>(i)] < min_lp) continue;  // below max - 16: stored as the minimum
        worst = std::max(worst, std::fabs(scale * row[static_cast<std::size_t>(4 + i)] + min_lp - lp[static_cast<std::size_t>(i)]));
    }
    CHECK(worst <= 0.5 * scale + 1e-5);
}

TEST_CASE("kl-divergence: statistics of a model against itself and against a shifted one", "[kld]") {
    const int n = 64;
    KlDivergence same, other;
    std::vector<std::uint16_t> row(static_cast<std::size_t>(log_prob_row_words(n)));
    double expected = 0;
    for (int pos = 0; pos < 120; ++pos) {
        const auto base = random_logits(n, 100 + static_cast<std::uint32_t>(pos));
        compress_log_probs(base, pos % n, row);
        same.add(base, row, pos % n);
        auto q = base;
        q[0] += 1.0f;  // the model puts more weight on token 0
        other.add(q, row, pos % n);
        const auto lp = log_softmax(base), lq = log_softmax(q);
        double kl = 0;
        for (int i = 0; i < n; ++i) kl += std::exp(lp[static_cast<std::size_t>(i)]) * (lp[static_cast<std::size_t>(i)] - lq[static_cast<std::size_t>(i)]);
        expected += kl;
    }
    CHECK(same.count() == 120);
    CHECK(std::fabs(same.mean_kld()) < 1e-5);
    CHECK(same.same_top_fraction() == 1.0);
    CHECK(same.ppl() == Approx(same.ppl_base()).epsilon(1e-4));
    CHECK(other.mean_kld() == Approx(expected / 120).epsilon(2e-3));
    CHECK(other.mean_kld() > 1e-3);
    CHECK_THAT(other.report(), Catch::Contains("Mean    KLD") && Catch::Contains("Same top p"));
}

TEST_CASE("kl-divergence: a base file is checked before use", "[kld]") {
    const int n_vocab = 10, n_ctx = 8, n_chunk = 2;
    std::vector<std::int32_t> tokens(n_ctx * n_chunk, 3);
    auto make = [&](std::int32_t vocab, std::size_t rows_bytes) {
        std::ostringstream out;
        write_logits_header(out, n_ctx, vocab, n_chunk, tokens);
        out << std::string(rows_bytes, '\0');
        return out.str();
    };
    const std::size_t rows = static_cast<std::size_t>(n_chunk * (n_ctx - 1 - n_ctx / 2) * 2 * log_prob_row_words(n_vocab));
    const auto read = [&](const std::string& bytes, std::int64_t vocab) {
        std::istringstream in(bytes);
        return read_logits_base(in, "base.kld", static_cast<std::int64_t>(bytes.size()), vocab);
    };
    const auto good = make(n_vocab, rows);
    const LogitsBase b = read(good, n_vocab);
    CHECK(b.n_ctx == 8);
    CHECK(b.rows_per_chunk() == 3);
    CHECK(b.tokens.size() == 16);
    CHECK_THROWS_WITH(read(good, 11), Catch::Contains("base.kld") && Catch::Contains("vocabulary of 10"));
    CHECK_THROWS_WITH(read(make(n_vocab, rows - 1), n_vocab), Catch::Contains("need"));
    CHECK_THROWS_WITH(read("_logitz_" + good.substr(8), n_vocab), Catch::Contains("_logits_"));
    CHECK_THROWS_WITH(read(good.substr(0, 14), n_vocab), Catch::Contains("header ends early"));
    std::string bad_token = good;
    bad_token[20] = 12;  // the first token: 12 is outside a vocabulary of 10
    CHECK_THROWS_WITH(read(bad_token, n_vocab), Catch::Contains("outside the vocabulary"));
}

#include "common/kl_divergence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "runtime/fail.hpp"

namespace ember::tools {
namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};

void put_float(std::uint16_t* words, float v) { std::memcpy(words, &v, sizeof v); }
float get_float(const std::uint16_t* words) {
    float v;
    std::memcpy(&v, words, sizeof v);
    return v;
}

template <class T>
void write_pod(std::ostream& out, const T& v) {
    out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
bool read_pod(std::istream& in, T& v) {
    return static_cast<bool>(in.read(reinterpret_cast<char*>(&v), sizeof v));
}

// Mean and its standard error (0 with fewer than 11 values), as llama.cpp reports them.
std::pair<double, double> mean_and_uncertainty(double sum, double sum2, std::int64_t count) {
    if (count < 1) return {0.0, 0.0};
    const double f = sum / static_cast<double>(count);
    double df = sum2 / static_cast<double>(count) - f * f;
    df = df > 0 && count > 10 ? std::sqrt(df / static_cast<double>(count - 1)) : 0.0;
    return {f, df};
}

double covariance(double sa, double sb, double sab, std::int64_t count) {
    if (count < 10) return 0.0;
    const auto n = static_cast<double>(count);
    return (sab / n - (sa / n) * (sb / n)) / (n - 1);
}

// Linear interpolation between the sorted values around `fraction` of the way.
float percentile(const std::vector<float>& sorted, float fraction) {
    if (fraction <= 0) return sorted.front();
    if (fraction >= 1) return sorted.back();
    float p = fraction * static_cast<float>(sorted.size() - 1);
    const auto ip = static_cast<std::size_t>(p);
    p -= static_cast<float>(ip);
    return (1 - p) * sorted[ip] + p * sorted[std::min(ip + 1, sorted.size() - 1)];
}

float median(const std::vector<float>& sorted) {
    const std::size_t n = sorted.size();
    return n % 2 == 0 ? 0.5f * (sorted[n / 2] + sorted[n / 2 - 1]) : sorted[n / 2];
}

std::string format(const char* fmt, auto... args) {
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

}  // namespace

double compress_log_probs(std::span<const float> logits, std::int32_t token, std::span<std::uint16_t> row) {
    const std::size_t n = logits.size();
    EMBER_ASSERT(n > 0 && row.size() >= static_cast<std::size_t>(log_prob_row_words(static_cast<std::int64_t>(n))));
    float max_logit = logits[0], min_logit = logits[0];
    for (const float l : logits) {
        max_logit = std::max(max_logit, l);
        min_logit = std::min(min_logit, l);
    }
    min_logit = std::max(min_logit, max_logit - 16);
    double sum_exp = 0.0;
    for (const float l : logits) sum_exp += std::exp(l - max_logit);
    const auto log_sum_exp = static_cast<float>(std::log(sum_exp));
    const float min_log_prob = min_logit - max_logit - log_sum_exp;
    const float scale = (max_logit - min_logit) / 65535.f;
    put_float(row.data(), scale);
    put_float(row.data() + 2, min_log_prob);
    std::uint16_t* q = row.data() + 4;
    if (scale != 0.0f) {
        const float inv_scale = 1 / scale;
        for (std::size_t i = 0; i < n; ++i) {
            q[i] = logits[i] > min_logit ? static_cast<std::uint16_t>(std::lrint(inv_scale * (logits[i] - min_logit))) : 0;
        }
    } else {
        std::fill_n(q, n, std::uint16_t{0});
    }
    return max_logit + log_sum_exp - logits[static_cast<std::size_t>(token)];
}

void write_logits_header(std::ostream& out, std::uint32_t n_ctx, std::int32_t n_vocab, std::int32_t n_chunk,
                         std::span<const std::int32_t> tokens) {
    out.write(kMagic, sizeof kMagic);
    write_pod(out, n_ctx);
    write_pod(out, n_vocab);
    write_pod(out, n_chunk);
    out.write(reinterpret_cast<const char*>(tokens.data()), static_cast<std::streamsize>(tokens.size_bytes()));
}

LogitsBase read_logits_base(std::istream& in, const std::string& path, std::int64_t file_size, std::int64_t n_vocab) {
    LogitsBase b;
    b.path = path;
    char magic[8] = {};
    if (!in.read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof magic) != 0) {
        fail(path + ": not a file of base log-probabilities (no '_logits_' at its start)");
    }
    if (!read_pod(in, b.n_ctx) || !read_pod(in, b.n_vocab) || !read_pod(in, b.n_chunk)) {
        fail(path + ": the header ends early (n_ctx, n_vocab, n_chunk)");
    }
    if (b.n_ctx < 4 || b.n_ctx > (1u << 24)) fail(path + ": context " + std::to_string(b.n_ctx) + " out of range [4, 2^24]");
    if (b.n_vocab != n_vocab) {
        fail(path + ": made with a vocabulary of " + std::to_string(b.n_vocab) + " tokens, this model has " +
             std::to_string(n_vocab));
    }
    if (b.n_chunk <= 0) fail(path + ": " + std::to_string(b.n_chunk) + " chunks; at least 1 is needed");
    const std::int64_t n_tokens = static_cast<std::int64_t>(b.n_ctx) * b.n_chunk;
    const std::int64_t row_bytes = 2 * log_prob_row_words(n_vocab);
    const std::int64_t header = 8 + 12 + 4 * n_tokens;
    const long double expected = static_cast<long double>(header) +
                                 static_cast<long double>(b.n_chunk) * b.rows_per_chunk() * row_bytes;
    if (expected != static_cast<long double>(file_size)) {
        fail(path + ": holds " + std::to_string(file_size) + " bytes; " + std::to_string(b.n_chunk) + " chunks of " +
             std::to_string(b.n_ctx) + " tokens need " + std::to_string(static_cast<long long>(expected)));
    }
    b.tokens.resize(static_cast<std::size_t>(n_tokens));
    if (!in.read(reinterpret_cast<char*>(b.tokens.data()), static_cast<std::streamsize>(4 * n_tokens))) {
        fail(path + ": the tokens end early");
    }
    for (std::size_t i = 0; i < b.tokens.size(); ++i) {
        if (b.tokens[i] < 0 || b.tokens[i] >= n_vocab) {
            fail(path + ": token " + std::to_string(i) + " is " + std::to_string(b.tokens[i]) + ", outside the vocabulary");
        }
    }
    return b;
}

void read_chunk(std::istream& in, const LogitsBase& base, int chunk, std::vector<std::uint16_t>& rows) {
    rows.resize(static_cast<std::size_t>(base.rows_per_chunk() * log_prob_row_words(base.n_vocab)));
    if (!in.read(reinterpret_cast<char*>(rows.data()), static_cast<std::streamsize>(2 * rows.size()))) {
        fail(base.path + ": the log-probabilities of chunk " + std::to_string(chunk + 1) + " end early");
    }
    const std::int64_t nv = log_prob_row_words(base.n_vocab);
    for (std::int64_t r = 0; r < base.rows_per_chunk(); ++r) {
        const float scale = get_float(rows.data() + r * nv), min_lp = get_float(rows.data() + r * nv + 2);
        if (!std::isfinite(scale) || scale < 0 || !std::isfinite(min_lp) || min_lp > 0) {
            fail(base.path + ": chunk " + std::to_string(chunk + 1) + ", row " + std::to_string(r) +
                 ": scale or minimum log-probability out of range");
        }
    }
}

void KlDivergence::add(std::span<const float> logits, std::span<const std::uint16_t> base_row, std::int32_t token) {
    const std::size_t n = logits.size();
    float max_logit = logits[0];
    std::size_t imax = 0;
    for (std::size_t i = 1; i < n; ++i) {
        if (logits[i] > max_logit) {
            max_logit = logits[i];
            imax = i;
        }
    }
    double sum_exp = 0.0;
    for (const float l : logits) sum_exp += std::exp(l - max_logit);
    const auto log_sum_exp = static_cast<float>(std::log(sum_exp));
    const float scale = get_float(base_row.data()), min_log_prob = get_float(base_row.data() + 2);
    const std::uint16_t* q = base_row.data() + 4;
    const auto tok = static_cast<std::size_t>(token);

    const float nll = max_logit + log_sum_exp - logits[tok];
    sum_nll_ += nll;
    sum_nll2_ += static_cast<double>(nll) * nll;
    const float nll_base = -(scale * q[tok] + min_log_prob);
    sum_nll_base_ += nll_base;
    sum_nll_base2_ += static_cast<double>(nll_base) * nll_base;
    sum_nll_nll_base_ += static_cast<double>(nll) * nll_base;

    // KL(base || model) over the tokens the base gives log p > -16.
    const float log_norm = max_logit + log_sum_exp;
    double kld = 0.0;
    std::size_t imax_base = 0;
    float best_base = 0.0f;
    for (std::size_t i = 0; i < n; ++i) {
        const float lp_base = scale * q[i] + min_log_prob;
        if (i == 0 || lp_base > best_base) {
            best_base = lp_base;
            imax_base = i;
        }
        if (lp_base > -16.f) kld += std::exp(lp_base) * (lp_base - logits[i] + log_norm);
    }
    sum_kld_ += kld;
    sum_kld2_ += kld * kld;
    ++count_;
    if (imax == imax_base) ++n_same_top_;

    const float p_diff = std::exp(-nll) - std::exp(-nll_base);
    sum_p_diff_ += p_diff;
    const double p_diff2 = static_cast<double>(p_diff) * p_diff;
    sum_p_diff2_ += p_diff2;
    sum_p_diff4_ += p_diff2 * p_diff2;
    kld_values_.push_back(static_cast<float>(kld));
    p_diff_values_.push_back(p_diff);
}

double KlDivergence::mean_kld() const { return mean_and_uncertainty(sum_kld_, sum_kld2_, count_).first; }
double KlDivergence::same_top_fraction() const {
    return count_ > 0 ? static_cast<double>(n_same_top_) / static_cast<double>(count_) : 0.0;
}
double KlDivergence::ppl() const { return std::exp(mean_and_uncertainty(sum_nll_, sum_nll2_, count_).first); }
double KlDivergence::ppl_base() const {
    return std::exp(mean_and_uncertainty(sum_nll_base_, sum_nll_base2_, count_).first);
}

std::string KlDivergence::chunk_line(int chunk) const {
    const auto log_ppl = mean_and_uncertainty(sum_nll_, sum_nll2_, count_);
    const auto log_ppl_base = mean_and_uncertainty(sum_nll_base_, sum_nll_base2_, count_);
    const double cov = covariance(sum_nll_, sum_nll_base_, sum_nll_nll_base_, count_);
    const double ratio_unc = std::sqrt(std::max(0.0, log_ppl.second * log_ppl.second +
                                                         log_ppl_base.second * log_ppl_base.second - 2.0 * cov));
    const auto kl = mean_and_uncertainty(sum_kld_, sum_kld2_, count_);
    const auto mse = mean_and_uncertainty(sum_p_diff2_, sum_p_diff4_, count_);
    const double rms = std::sqrt(mse.first), rms_unc = rms > 0 ? 0.5 / rms * mse.second : 0.0;
    const double top = same_top_fraction();
    const double top_unc = count_ > 1 ? std::sqrt(top * (1 - top) / static_cast<double>(count_ - 1)) : 0.0;
    const double ppl_val = std::exp(log_ppl.first);
    return format("%4d", chunk + 1) + format("    %9.4lf ± %9.4lf", ppl_val, ppl_val * log_ppl.second) +
           format("    %10.5lf ± %10.5lf", log_ppl.first - log_ppl_base.first, ratio_unc) +
           format("    %10.5lf ± %10.5lf", kl.first, kl.second) +
           format("    %6.3lf ± %6.3lf %%", 100.0 * rms, 100.0 * rms_unc) +
           format("    %6.3lf ± %6.3lf %%", 100.0 * top, 100.0 * top_unc);
}

std::string KlDivergence::report() const {
    if (count_ < 100) return "(fewer than 100 scored tokens: no statistics)\n";
    std::vector<float> klds = kld_values_, dps = p_diff_values_;
    std::sort(klds.begin(), klds.end());
    std::sort(dps.begin(), dps.end());
    std::string o = "====== Perplexity statistics ======\n";
    const auto log_ppl = mean_and_uncertainty(sum_nll_, sum_nll2_, count_);
    const auto log_ppl_base = mean_and_uncertainty(sum_nll_base_, sum_nll_base2_, count_);
    const double ppl_val = std::exp(log_ppl.first), ppl_unc = ppl_val * log_ppl.second;
    const double base_val = std::exp(log_ppl_base.first), base_unc = base_val * log_ppl_base.second;
    const double cov = covariance(sum_nll_, sum_nll_base_, sum_nll_nll_base_, count_);
    o += format("Mean PPL(Q)                   : %10.6lf ± %10.6lf\n", ppl_val, ppl_unc);
    o += format("Mean PPL(base)                : %10.6lf ± %10.6lf\n", base_val, base_unc);
    const double denom = log_ppl.second * log_ppl_base.second;
    o += format("Cor(ln(PPL(Q)), ln(PPL(base))): %6.2lf%%\n", denom > 0 ? 100.0 * cov / denom : 100.0);
    const double ratio = log_ppl.first - log_ppl_base.first;
    const double ratio_unc = std::sqrt(std::max(0.0, log_ppl.second * log_ppl.second +
                                                         log_ppl_base.second * log_ppl_base.second - 2.0 * cov));
    o += format("Mean ln(PPL(Q)/PPL(base))     : %10.6lf ± %10.6lf\n", ratio, ratio_unc);
    o += format("Mean PPL(Q)/PPL(base)         : %10.6lf ± %10.6lf\n", std::exp(ratio), std::exp(ratio) * ratio_unc);
    const double diff_unc = std::sqrt(std::max(0.0, ppl_unc * ppl_unc + base_unc * base_unc -
                                                        2.0 * ppl_val * base_val * cov));
    o += format("Mean PPL(Q)-PPL(base)         : %10.6lf ± %10.6lf\n\n", ppl_val - base_val, diff_unc);

    o += "====== KL divergence statistics ======\n";
    const auto kl = mean_and_uncertainty(sum_kld_, sum_kld2_, count_);
    o += format("Mean    KLD: %10.6lf ± %10.6lf\n", kl.first, kl.second);
    o += format("Maximum KLD: %10.6f\n", klds.back());
    o += format("99.9%%   KLD: %10.6f\n", percentile(klds, 0.999f));
    o += format("99.0%%   KLD: %10.6f\n", percentile(klds, 0.990f));
    o += format("Median  KLD: %10.6f\n", median(klds));
    o += format("10.0%%   KLD: %10.6f\n", percentile(klds, 0.100f));
    o += format(" 5.0%%   KLD: %10.6f\n", percentile(klds, 0.050f));
    o += format(" 1.0%%   KLD: %10.6f\n", percentile(klds, 0.010f));
    o += format("Minimum KLD: %10.6f\n\n", klds.front());

    o += "====== Token probability statistics ======\n";
    const auto dp = mean_and_uncertainty(sum_p_diff_, sum_p_diff2_, count_);
    o += format("Mean    Δp: %6.3lf ± %5.3lf %%\n", 100.0 * dp.first, 100.0 * dp.second);
    o += format("Maximum Δp: %6.3lf%%\n", 100.0 * dps.back());
    const std::pair<const char*, float> levels[] = {{"99.9%", 0.999f}, {"99.0%", 0.990f}, {"95.0%", 0.950f},
                                                    {"90.0%", 0.900f}, {"75.0%", 0.750f}};
    for (const auto& [name, f] : levels) o += format("%s   Δp: %6.3lf%%\n", name, 100.0 * percentile(dps, f));
    o += format("Median  Δp: %6.3lf%%\n", 100.0 * median(dps));
    const std::pair<const char*, float> low[] = {{"25.0%", 0.250f}, {"10.0%", 0.100f}, {" 5.0%", 0.050f},
                                                 {" 1.0%", 0.010f}, {" 0.1%", 0.001f}};
    for (const auto& [name, f] : low) o += format("%s   Δp: %6.3lf%%\n", name, 100.0 * percentile(dps, f));
    o += format("Minimum Δp: %6.3lf%%\n", 100.0 * dps.front());
    const auto mse = mean_and_uncertainty(sum_p_diff2_, sum_p_diff4_, count_);
    const double rms = std::sqrt(mse.first), rms_unc = rms > 0 ? 0.5 / rms * mse.second : 0.0;
    o += format("RMS Δp    : %6.3lf ± %5.3lf %%\n", 100.0 * rms, 100.0 * rms_unc);
    const double top = same_top_fraction();
    o += format("Same top p: %6.3lf ± %5.3lf %%\n", 100.0 * top,
                100.0 * std::sqrt(top * (1.0 - top) / static_cast<double>(count_ - 1)));
    return o;
}

}  // namespace ember::tools

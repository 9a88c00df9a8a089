// ember-perplexity -m MODEL -f TEXT -c N [-t T] [-b B]: perplexity as llama.cpp's perplexity
// tool computes it. The text is tokenized once with BOS and cut into whole chunks of N tokens
// (the tail is dropped). Each chunk runs in a fresh context with its first token replaced by
// BOS, and only the second half is scored: logits after position j predict token j + 1 for
// j in [N/2, N - 1), so every scored token has at least N/2 tokens of context.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/quant_mix.hpp"
#include "ember/model.hpp"
#include "ember/session.hpp"

namespace {

void usage() {
    std::fprintf(stderr,
                 "usage: ember-perplexity -m MODEL.gguf -f TEXT.txt [-c CONTEXT=512] [-t THREADS] [-b BATCH]\n");
}

// -log p(token) from raw logits, in double.
double negative_log_likelihood(std::span<const float> logits, ember::Token token) {
    const float max_logit = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max_logit);
    return std::log(sum) - (static_cast<double>(logits[static_cast<std::size_t>(token)]) - max_logit);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::string model_path, text_path;
        int n_ctx = 512, n_threads = 0, n_batch = 0;
        for (int i = 1; i < argc; ++i) {
            const std::string_view a = argv[i];
            const bool has_value = i + 1 < argc;
            if (a == "-m" && has_value) model_path = argv[++i];
            else if (a == "-f" && has_value) text_path = argv[++i];
            else if (a == "-c" && has_value) n_ctx = static_cast<int>(ember::tools::parse_int(a, argv[++i]));
            else if (a == "-t" && has_value) n_threads = static_cast<int>(ember::tools::parse_int(a, argv[++i]));
            else if (a == "-b" && has_value) n_batch = static_cast<int>(ember::tools::parse_int(a, argv[++i]));
            else if (a == "-h" || a == "--help") {
                usage();
                return 0;
            } else {
                std::fprintf(stderr, "ember-perplexity: unknown or incomplete option %s\n", argv[i]);
                usage();
                return 1;
            }
        }
        if (model_path.empty() || text_path.empty()) {
            usage();
            return 1;
        }
        if (n_ctx < 4) {
            std::fprintf(stderr, "ember-perplexity: context must be at least 4 tokens\n");
            return 1;
        }
        n_batch = n_batch > 0 ? std::min(n_batch, n_ctx) : n_ctx;

        std::ifstream f(text_path, std::ios::binary);
        if (!f) {
            std::fprintf(stderr, "ember-perplexity: cannot read %s\n", text_path.c_str());
            return 1;
        }
        std::stringstream ss;
        ss << f.rdbuf();
        const std::string text = ss.str();

        ember::ModelOptions model_options;
        model_options.threads = n_threads;
        const ember::Model model = ember::Model::load(model_path, model_options);
        const std::vector<ember::Token> tokens = model.tokenize(text, {.add_bos = true});
        const ember::Token bos = model.bos();
        const int n_chunk = static_cast<int>(tokens.size() / static_cast<std::size_t>(n_ctx));
        if (tokens.size() < 2 * static_cast<std::size_t>(n_ctx)) {
            std::fprintf(stderr, "ember-perplexity: %s has %zu tokens; context %d needs at least %d\n",
                         text_path.c_str(), tokens.size(), n_ctx, 2 * n_ctx);
            return 1;
        }
        std::fprintf(stderr, "perplexity: %zu tokens, %d chunks of %d, batch %d\n", tokens.size(), n_chunk,
                     n_ctx, n_batch);

        ember::SessionOptions session_options;
        session_options.context = n_ctx;
        session_options.threads = n_threads;
        session_options.batch = n_batch;
        session_options.logits_all = true;
        ember::Session session(model, session_options);
        const int first = n_ctx / 2;
        double nll = 0.0, nll2 = 0.0;
        long long count = 0;
        std::vector<ember::Token> chunk(static_cast<std::size_t>(n_ctx));
        for (int c = 0; c < n_chunk; ++c) {
            const auto begin = tokens.begin() + static_cast<std::ptrdiff_t>(c) * n_ctx;
            std::copy(begin, begin + n_ctx, chunk.begin());
            if (bos >= 0) chunk[0] = bos;
            session.reset();
            for (int b0 = 0; b0 < n_ctx; b0 += n_batch) {
                const int nb = std::min(n_batch, n_ctx - b0);
                if (session.prefill(std::span(chunk.data() + b0, static_cast<std::size_t>(nb))) != ember::Status::ok) {
                    std::fprintf(stderr, "ember-perplexity: prefill failed in chunk %d\n", c + 1);
                    return 1;
                }
                for (int j = std::max(b0, first); j < std::min(b0 + nb, n_ctx - 1); ++j) {
                    const double v = negative_log_likelihood(session.logits_at(j - b0),
                                                             *(begin + j + 1));
                    nll += v;
                    nll2 += v * v;
                    ++count;
                }
            }
            std::printf("[%d]%.4f,", c + 1, std::exp(nll / static_cast<double>(count)));
            std::fflush(stdout);
        }
        std::printf("\n");
        const double mean = nll / static_cast<double>(count);
        const double ppl = std::exp(mean);
        // Standard error of the mean NLL, propagated to the perplexity (as llama.cpp reports it).
        const double var = nll2 / static_cast<double>(count) - mean * mean;
        const double err = count > 1 ? ppl * std::sqrt(std::max(var, 0.0) / static_cast<double>(count - 1)) : 0.0;
        std::printf("PPL = %.4f +/- %.5f\n", ppl, err);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ember-perplexity: %s\n", e.what());
        return 1;
    }
}

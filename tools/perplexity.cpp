// ember-perplexity -m MODEL -f TEXT -c N [-t T] [-b B]: perplexity as llama.cpp's perplexity
// tool computes it. The text is tokenized once with BOS and cut into whole chunks of N tokens
// (the tail is dropped). Each chunk runs in a fresh context with its first token replaced by
// BOS, and only the second half is scored: logits after position j predict token j + 1 for
// j in [N/2, N - 1), so every scored token has at least N/2 tokens of context.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/report.hpp"
#include "cli/text_input.hpp"
#include "ember/error.hpp"
#include "ember/model.hpp"
#include "ember/session.hpp"

namespace {

constexpr ember::cli::IntRange kPplContextRange{4, 1 << 20};
constexpr ember::cli::IntRange kBatchRange{1, 1 << 20};

void usage() {
    std::printf("usage: ember-perplexity -m MODEL.gguf -f TEXT.txt [-c CONTEXT=512] [-t THREADS] [-b BATCH]\n"
                "  -f FILE  a regular text file of at most 512 MiB (- for stdin)\n"
                "  -c N     tokens per chunk, %s\n"
                "  -b N     tokens per forward pass, %s (default: the context)\n"
                "  -t N     threads, %s (default 0: all)\n",
                describe(kPplContextRange).c_str(), describe(kBatchRange).c_str(),
                describe(ember::cli::kThreadRange).c_str());
}

// -log p(token) from raw logits, in double.
double negative_log_likelihood(std::span<const float> logits, ember::Token token) {
    const float max_logit = *std::max_element(logits.begin(), logits.end());
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - max_logit);
    return std::log(sum) - (static_cast<double>(logits[static_cast<std::size_t>(token)]) - max_logit);
}

int run(int argc, char** argv) {
    using ember::cli::UsageError;
    std::string model_path, text_path;
    int n_ctx = 512, n_threads = 0, n_batch = 0;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-m")) model_path = args.value();
        else if (args.is("-f")) text_path = args.value();
        else if (args.is("-c")) n_ctx = static_cast<int>(args.int_value(kPplContextRange));
        else if (args.is("-t")) n_threads = static_cast<int>(args.int_value(ember::cli::kThreadRange));
        else if (args.is("-b")) n_batch = static_cast<int>(args.int_value(kBatchRange));
        else if (args.is("-h", "--help")) {
            usage();
            return 0;
        } else {
            args.unknown();
        }
    }
    if (model_path.empty() || text_path.empty()) throw UsageError("-m MODEL and -f TEXT are required");
    n_batch = n_batch > 0 ? std::min(n_batch, n_ctx) : n_ctx;
    const std::string text = ember::cli::read_text_input(text_path, ember::cli::kCorpusLimit, "text file");

    ember::ModelOptions model_options;
    model_options.threads = n_threads;
    const ember::Model model = ember::Model::load(model_path, model_options);
    const std::vector<ember::Token> tokens = model.tokenize(text, {.add_bos = true});
    const ember::Token bos = model.bos();
    const int n_chunk = static_cast<int>(tokens.size() / static_cast<std::size_t>(n_ctx));
    if (tokens.size() < 2 * static_cast<std::size_t>(n_ctx)) {
        throw ember::Error(text_path + " has " + std::to_string(tokens.size()) + " tokens; context " +
                           std::to_string(n_ctx) + " needs at least " + std::to_string(2 * n_ctx));
    }
    ember::SessionOptions session_options;
    session_options.context = n_ctx;
    session_options.threads = n_threads;
    session_options.batch = n_batch;
    session_options.logits_all = true;
    ember::Session session(model, session_options);
    std::fprintf(stderr, "perplexity: %zu tokens, %d chunks of %d, batch %d\n", tokens.size(), n_chunk, n_ctx,
                 n_batch);

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
                throw ember::Error("prefill failed in chunk " + std::to_string(c + 1));
            }
            for (int j = std::max(b0, first); j < std::min(b0 + nb, n_ctx - 1); ++j) {
                const double v = negative_log_likelihood(session.logits_at(j - b0), *(begin + j + 1));
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
}

}  // namespace

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-perplexity", [&] { return run(argc, argv); });
}

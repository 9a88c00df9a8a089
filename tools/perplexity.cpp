// ember-perplexity -m MODEL -f TEXT -c N [-t T] [-b B]: perplexity as llama.cpp's perplexity
// tool computes it. The text is tokenized once with BOS and cut into whole chunks of N tokens
// (the tail is dropped). Each chunk runs in a fresh context with its first token replaced by
// BOS, and only the second half is scored: logits after position j predict token j + 1 for
// j in [N/2, N - 1), so every scored token has at least N/2 tokens of context.
//
// --kl-divergence-base FILE saves the scored log-probabilities (llama.cpp's file format);
// --kl-divergence compares this model with them (KL divergence, same top token, PPL ratio).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/report.hpp"
#include "cli/text_input.hpp"
#include "common/kl_divergence.hpp"
#include "ember/error.hpp"
#include "ember/model.hpp"
#include "ember/session.hpp"
#include "ember/text.hpp"
#include "kernels/dispatch.hpp"
#include "runtime/file_io.hpp"

namespace {

constexpr ember::cli::IntRange kPplContextRange{4, 1 << 20};
constexpr ember::cli::IntRange kBatchRange{1, 1 << 20};

void usage() {
    std::printf("usage: ember-perplexity -m MODEL.gguf -f TEXT.txt [-c CONTEXT=512] [-t THREADS] [-b BATCH]\n"
                "                        [--kl-divergence-base FILE]\n"
                "       ember-perplexity -m MODEL.gguf --kl-divergence --kl-divergence-base FILE [-t T] [-b B]\n"
                "  -f FILE  a regular text file of at most 512 MiB (- for stdin)\n"
                "  -c N     tokens per chunk, %s\n"
                "  -b N     tokens per forward pass, %s (default: the context)\n"
                "  -t N     threads, %s (default 0: all)\n"
                "  --kv-type T  KV cache type: f32 (default), f16, q8_0\n"
                "  --kl-divergence-base FILE  with -f: save the log-probabilities to FILE (llama.cpp's format)\n"
                "  --kl-divergence            compare with the saved ones (KL divergence, same top token,\n"
                "                             PPL ratio); the tokens come from the base file, not -f\n",
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

// Runs each chunk of n_ctx tokens in a fresh context (first token replaced by BOS) and calls
// score(chunk, j, logits after position j, token j + 1) for j in [n_ctx/2, n_ctx - 1), then
// done(chunk).
template <class Score, class Done>
void run_chunks(ember::Session& session, std::span<const ember::Token> tokens, int n_chunk, int n_ctx, int n_batch,
                ember::Token bos, Score&& score, Done&& done) {
    const int first = n_ctx / 2;
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
                score(c, j, session.logits_at(j - b0), *(begin + j + 1));
            }
        }
        done(c);
    }
}

// What every chunk's session shares besides its context: threads, tokens per pass, KV type.
struct SessionSettings {
    int threads = 0;
    int batch = 0;
    ember::KvType kv_type = ember::KvType::f32;
};

ember::Session make_session(const ember::Model& model, int n_ctx, const SessionSettings& settings) {
    ember::SessionOptions session_options;
    session_options.context = n_ctx;
    session_options.threads = settings.threads;
    session_options.batch = settings.batch;
    session_options.kv_type = settings.kv_type;
    session_options.logits_all = true;
    return ember::Session(model, session_options);
}

// --kl-divergence: this model against the base file's log-probabilities.
int kl_divergence(const ember::Model& model, const std::string& base_path, int n_ctx_option,
                  SessionSettings settings) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(base_path, ec)) {
        throw ember::Error(base_path + ": the KL-divergence base is missing or not a regular file");
    }
    std::ifstream in(base_path, std::ios::binary | std::ios::ate);
    if (!in) throw ember::Error(base_path + ": cannot read the KL-divergence base");
    const auto size = static_cast<std::int64_t>(in.tellg());
    in.seekg(0);
    const ember::tools::LogitsBase base = ember::tools::read_logits_base(in, base_path, size, model.n_vocab());
    const int n_ctx = static_cast<int>(base.n_ctx);
    if (n_ctx_option > 0 && n_ctx_option != n_ctx) {
        throw ember::Error(base_path + " was made with context " + std::to_string(n_ctx) + ", not " +
                           std::to_string(n_ctx_option) + " (-c)");
    }
    settings.batch = settings.batch > 0 ? std::min(settings.batch, n_ctx) : n_ctx;
    const int n_batch = settings.batch;
    std::fprintf(stderr, "kl-divergence: %d chunks of %d tokens from %s, batch %d, kernels %s\n", base.n_chunk, n_ctx,
                 ember::printable(base_path).c_str(), n_batch, std::string(ember::kernels::isa_name()).c_str());
    ember::Session session = make_session(model, n_ctx, settings);
    const std::int64_t nv = ember::tools::log_prob_row_words(base.n_vocab);
    std::vector<std::uint16_t> rows;
    ember::tools::KlDivergence kld;
    int loaded = -1;
    std::printf("chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS"
                "            Same top p\n");
    run_chunks(
        session, base.tokens, base.n_chunk, n_ctx, n_batch, model.bos(),
        [&](int c, int j, std::span<const float> logits, ember::Token next) {
            if (loaded != c) {
                ember::tools::read_chunk(in, base, c, rows);
                loaded = c;
            }
            const std::int64_t r = j - n_ctx / 2;
            kld.add(logits, std::span(rows).subspan(static_cast<std::size_t>(r * nv), static_cast<std::size_t>(nv)), next);
        },
        [&](int c) {
            std::printf("%s\n", kld.chunk_line(c).c_str());
            std::fflush(stdout);
        });
    std::printf("\n%s", kld.report().c_str());
    return 0;
}

int run(int argc, char** argv) {
    using ember::cli::UsageError;
    std::string model_path, text_path, base_path;
    int n_ctx = 512, n_threads = 0, n_batch = 0;
    ember::KvType kv_type = ember::KvType::f32;
    bool compare = false, ctx_given = false;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-m")) model_path = args.value();
        else if (args.is("-f")) text_path = args.value();
        else if (args.is("-c")) {
            n_ctx = static_cast<int>(args.int_value(kPplContextRange));
            ctx_given = true;
        } else if (args.is("-t")) n_threads = static_cast<int>(args.int_value(ember::cli::kThreadRange));
        else if (args.is("-b")) n_batch = static_cast<int>(args.int_value(kBatchRange));
        else if (args.is("--kv-type")) kv_type = args.kv_type_value();
        else if (args.is("--kl-divergence-base")) base_path = args.value();
        else if (args.is("--kl-divergence")) compare = true;
        else if (args.is("-h", "--help")) {
            usage();
            return 0;
        } else {
            args.unknown();
        }
    }
    if (compare) {
        if (model_path.empty() || base_path.empty()) {
            throw UsageError("--kl-divergence needs -m MODEL and --kl-divergence-base FILE");
        }
        if (!text_path.empty()) throw UsageError("--kl-divergence reads the tokens from --kl-divergence-base FILE, not -f");
        ember::ModelOptions model_options;
        model_options.threads = n_threads;
        const ember::Model model = ember::Model::load(model_path, model_options);
        return kl_divergence(model, base_path, ctx_given ? n_ctx : 0, {n_threads, n_batch, kv_type});
    }
    if (model_path.empty() || text_path.empty()) throw UsageError("-m MODEL and -f TEXT are required");
    n_batch = n_batch > 0 ? std::min(n_batch, n_ctx) : n_ctx;
    const std::string text = ember::cli::read_text_input(text_path, ember::cli::kCorpusLimit, "text file");
    if (!base_path.empty()) ember::check_output_target(base_path);  // before the work, not after

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
    std::fprintf(stderr, "perplexity: %zu tokens, %d chunks of %d, batch %d, kernels %s\n", tokens.size(), n_chunk,
                 n_ctx, n_batch, std::string(ember::kernels::isa_name()).c_str());

    // The base file: written to a temporary file, renamed over the target when complete.
    std::unique_ptr<ember::OutputFile> base_out;
    std::vector<std::uint16_t> rows;
    const std::int64_t nv = ember::tools::log_prob_row_words(model.n_vocab());
    if (!base_path.empty()) {
        base_out = std::make_unique<ember::OutputFile>(base_path);
        std::ostringstream header;
        ember::tools::write_logits_header(header, static_cast<std::uint32_t>(n_ctx),
                                          static_cast<std::int32_t>(model.n_vocab()), n_chunk,
                                          std::span(tokens).first(static_cast<std::size_t>(n_chunk) * n_ctx));
        const std::string h = header.str();
        base_out->write(h.data(), h.size());
        rows.resize(static_cast<std::size_t>((n_ctx - 1 - n_ctx / 2) * nv));
    }
    ember::Session session = make_session(model, n_ctx, {n_threads, n_batch, kv_type});
    double nll = 0.0, nll2 = 0.0;
    long long count = 0;
    run_chunks(
        session, tokens, n_chunk, n_ctx, n_batch, bos,
        [&](int, int j, std::span<const float> logits, ember::Token next) {
            const double v = negative_log_likelihood(logits, next);
            nll += v;
            nll2 += v * v;
            ++count;
            if (base_out) {
                const std::int64_t r = j - n_ctx / 2;
                ember::tools::compress_log_probs(
                    logits, next, std::span(rows).subspan(static_cast<std::size_t>(r * nv), static_cast<std::size_t>(nv)));
            }
        },
        [&](int c) {
            if (base_out) base_out->write(rows.data(), 2 * rows.size());
            std::printf("[%d]%.4f,", c + 1, std::exp(nll / static_cast<double>(count)));
            std::fflush(stdout);
        });
    if (base_out) {
        base_out->commit();
        std::fprintf(stderr, "perplexity: saved the log-probabilities to %s\n", ember::printable(base_path).c_str());
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

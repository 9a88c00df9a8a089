// ember-generate-model: writes a llama-architecture GGUF with random (seeded) weights of a given
// shape and type, for benchmarks and tests. Loads in ember and llama.cpp.
//
//   ember-generate-model -o /tmp/tl-q4_0.gguf --preset tinyllama --type Q4_0
//   ember-generate-model -o small.gguf --n-embd 256 --n-layer 2 --n-ff 512 --vocab-from stories260K.gguf
//   ember-generate-model -o echo-draft.gguf --preset tinyllama --n-layer 2 --type Q4_0 --echo
#include <cstdio>
#include <string>

#include "cli/args.hpp"
#include "cli/report.hpp"
#include "common/generate_model.hpp"
#include "common/quant_mix.hpp"

namespace {

using ember::cli::IntRange;
using ember::cli::RealRange;

// Shape ranges: beyond every released llama-family model, and small enough that one row of
// any tensor fits in memory and sizes cannot overflow.
constexpr IntRange kEmbdRange{1, 65536};
constexpr IntRange kLayerRange{1, 1024};
constexpr IntRange kHeadRange{1, 1024};
constexpr IntRange kFfRange{1, 262144};
constexpr IntRange kVocabRange{1, 1 << 22};
constexpr IntRange kCtxRange{1, 1 << 24};
constexpr RealRange kStdRange{0.0, 10.0, true};

void usage() {
    std::printf("usage: ember-generate-model -o OUT.gguf [--preset tinyllama|7b|tiny] [--type TYPE]\n"
                "         [--n-embd N] [--n-layer N] [--n-head N] [--n-head-kv N] [--n-ff N]\n"
                "         [--n-vocab N] [--n-ctx N] [--vocab-from MODEL.gguf] [--seed S]\n"
                "         [--std SIGMA] [--name NAME] [--threads N] [--echo] [--quiet]\n"
                "  --echo: layer weights of std 0.002 and output = token_embd x 50: the model repeats\n"
                "          its last token (its quantizations and fewer-layer copies agree with it)\n"
                "  TYPE: %s (default F16)\n"
                "  ranges: --n-embd %s, --n-layer %s, --n-head and --n-head-kv %s, --n-ff %s,\n"
                "          --n-vocab %s, --n-ctx %s, --std %s, --threads %s\n"
                "  OUT is written to a temporary file in its folder, then renamed; an existing OUT\n"
                "  must be a regular file.\n",
                ember::tools::file_type_names().c_str(), describe(kEmbdRange).c_str(), describe(kLayerRange).c_str(),
                describe(kHeadRange).c_str(), describe(kFfRange).c_str(), describe(kVocabRange).c_str(),
                describe(kCtxRange).c_str(), describe(kStdRange).c_str(), describe(ember::cli::kThreadRange).c_str());
}

int run(int argc, char** argv) {
    using ember::cli::UsageError;
    ember::tools::GenerateOptions o;
    std::string out;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-h", "--help")) {
            usage();
            return 0;
        } else if (args.is("--quiet")) o.verbose = false;
        else if (args.is("--echo")) o.echo = true;
        else if (args.is("-o")) out = args.value();
        else if (args.is("--preset")) {
            const std::string name = args.value();
            if (!ember::tools::preset_shape(name, o.shape)) {
                throw UsageError("--preset: unknown preset '" + name + "' (tinyllama, 7b or tiny)");
            }
        } else if (args.is("--type")) {
            const std::string name = args.value();
            o.type = ember::tools::find_file_type(name);
            if (o.type == nullptr) {
                throw UsageError("--type: unknown type '" + name + "' (one of " + ember::tools::file_type_names() + ")");
            }
        } else if (args.is("--n-embd")) o.shape.n_embd = args.int_value(kEmbdRange);
        else if (args.is("--n-layer")) o.shape.n_layer = args.int_value(kLayerRange);
        else if (args.is("--n-head")) o.shape.n_head = args.int_value(kHeadRange);
        else if (args.is("--n-head-kv")) o.shape.n_head_kv = args.int_value(kHeadRange);
        else if (args.is("--n-ff")) o.shape.n_ff = args.int_value(kFfRange);
        else if (args.is("--n-vocab")) o.shape.n_vocab = args.int_value(kVocabRange);
        else if (args.is("--n-ctx")) o.shape.n_ctx = args.int_value(kCtxRange);
        else if (args.is("--vocab-from")) o.vocab_from = args.value();
        else if (args.is("--seed")) o.seed = args.u64_value();
        else if (args.is("--std")) o.stddev = static_cast<float>(args.real_value(kStdRange));
        else if (args.is("--name")) o.name = args.value();
        else if (args.is("-t", "--threads")) o.threads = static_cast<int>(args.int_value(ember::cli::kThreadRange));
        else args.unknown();
    }
    if (out.empty()) throw UsageError("no output file given (-o OUT.gguf)");
    ember::tools::generate_model(o, out);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-generate-model", [&] { return run(argc, argv); });
}

// ember-generate-model: writes a llama-architecture GGUF with random (seeded) weights of a given
// shape and type, for benchmarks and tests. Loads in ember and llama.cpp.
//
//   ember-generate-model -o /tmp/tl-q4_0.gguf --preset tinyllama --type Q4_0
//   ember-generate-model -o small.gguf --n-embd 256 --n-layer 2 --n-ff 512 --vocab-from stories260K.gguf
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "common/generate_model.hpp"
#include "common/quant_mix.hpp"

namespace {

void usage() {
    std::fprintf(stderr,
                 "usage: ember-generate-model -o OUT.gguf [--preset tinyllama|7b|tiny] [--type TYPE]\n"
                 "         [--n-embd N] [--n-layer N] [--n-head N] [--n-head-kv N] [--n-ff N]\n"
                 "         [--n-vocab N] [--n-ctx N] [--vocab-from MODEL.gguf] [--seed S]\n"
                 "         [--std SIGMA] [--name NAME] [--threads N] [--quiet]\n"
                 "  TYPE: %s (default F16)\n",
                 ember::tools::file_type_names().c_str());
}

}  // namespace

int main(int argc, char** argv) {
    using ember::tools::parse_int;
    try {
        ember::tools::GenerateOptions o;
        std::string out;
        for (int i = 1; i < argc; ++i) {
            const std::string_view a = argv[i];
            if (a == "-h" || a == "--help") {
                usage();
                return 0;
            }
            if (a == "--quiet") {
                o.verbose = false;
                continue;
            }
            if (i + 1 >= argc) {
                std::fprintf(stderr, "ember-generate-model: %s needs a value\n", argv[i]);
                return 1;
            }
            const std::string_view v = argv[++i];
            if (a == "-o") out = v;
            else if (a == "--preset") {
                if (!ember::tools::preset_shape(v, o.shape)) {
                    std::fprintf(stderr, "ember-generate-model: unknown preset %s\n", argv[i]);
                    return 1;
                }
            } else if (a == "--type") {
                o.type = ember::tools::find_file_type(v);
                if (o.type == nullptr) {
                    std::fprintf(stderr, "ember-generate-model: unknown type %s\n", argv[i]);
                    usage();
                    return 1;
                }
            } else if (a == "--n-embd") o.shape.n_embd = parse_int(a, v);
            else if (a == "--n-layer") o.shape.n_layer = parse_int(a, v);
            else if (a == "--n-head") o.shape.n_head = parse_int(a, v);
            else if (a == "--n-head-kv") o.shape.n_head_kv = parse_int(a, v);
            else if (a == "--n-ff") o.shape.n_ff = parse_int(a, v);
            else if (a == "--n-vocab") o.shape.n_vocab = parse_int(a, v);
            else if (a == "--n-ctx") o.shape.n_ctx = parse_int(a, v);
            else if (a == "--vocab-from") o.vocab_from = v;
            else if (a == "--seed") o.seed = static_cast<std::uint64_t>(parse_int(a, v));
            else if (a == "--std") o.stddev = std::stof(std::string(v));
            else if (a == "--name") o.name = v;
            else if (a == "--threads" || a == "-t") o.threads = static_cast<int>(parse_int(a, v));
            else {
                std::fprintf(stderr, "ember-generate-model: unknown option %s\n", argv[i - 1]);
                usage();
                return 1;
            }
        }
        if (out.empty()) {
            usage();
            return 1;
        }
        ember::tools::generate_model(o, out);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ember-generate-model: %s\n", e.what());
        return 1;
    }
}

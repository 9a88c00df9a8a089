// ember-quantize IN.gguf OUT.gguf TYPE [--threads N]: converts a model's weights to a quantized
// type with llama.cpp's per-tensor mixture, keeping every metadata entry.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "common/quant_mix.hpp"
#include "common/quantize_model.hpp"

namespace {

void usage() {
    std::fprintf(stderr,
                 "usage: ember-quantize IN.gguf OUT.gguf TYPE [--threads N] [--quiet]\n"
                 "  TYPE: %s\n",
                 ember::tools::file_type_names().c_str());
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<std::string> positional;
        ember::tools::QuantizeOptions options;
        for (int i = 1; i < argc; ++i) {
            const std::string_view a = argv[i];
            if ((a == "--threads" || a == "-t") && i + 1 < argc) {
                options.threads = static_cast<int>(ember::tools::parse_int(a, argv[++i]));
            } else if (a == "--quiet") {
                options.verbose = false;
            } else if (a == "-h" || a == "--help") {
                usage();
                return 0;
            } else if (!a.empty() && a[0] == '-') {
                std::fprintf(stderr, "ember-quantize: unknown option %s\n", argv[i]);
                usage();
                return 1;
            } else {
                positional.emplace_back(a);
            }
        }
        if (positional.size() != 3) {
            usage();
            return 1;
        }
        const ember::tools::FileType* type = ember::tools::find_file_type(positional[2]);
        if (type == nullptr) {
            std::fprintf(stderr, "ember-quantize: unknown type %s\n", positional[2].c_str());
            usage();
            return 1;
        }
        ember::tools::quantize_model(positional[0], positional[1], *type, options);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ember-quantize: %s\n", e.what());
        return 1;
    }
}

// ember-quantize IN.gguf OUT.gguf TYPE [--threads N] [--quiet]: converts a model's weights to a
// quantized type with llama.cpp's per-tensor mixture, keeping every metadata entry.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/report.hpp"
#include "common/quant_mix.hpp"
#include "common/quantize_model.hpp"

namespace {

void usage() {
    std::printf("usage: ember-quantize IN.gguf OUT.gguf TYPE [--threads N] [--quiet]\n"
                "  TYPE: %s\n"
                "  -t, --threads N  threads, 0..1024 (default 0: all)\n"
                "  OUT is written to a temporary file in its folder, then renamed; an existing OUT\n"
                "  must be a regular file.\n",
                ember::tools::file_type_names().c_str());
}

int run(int argc, char** argv) {
    using ember::cli::UsageError;
    std::vector<std::string> positional;
    ember::tools::QuantizeOptions options;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-t", "--threads")) options.threads = static_cast<int>(args.int_value(ember::cli::kThreadRange));
        else if (args.is("--quiet")) options.verbose = false;
        else if (args.is("-h", "--help")) {
            usage();
            return 0;
        } else if (args.arg().size() > 1 && args.arg()[0] == '-') {
            args.unknown();
        } else {
            positional.emplace_back(args.arg());
        }
    }
    if (positional.size() != 3) throw UsageError("expected IN.gguf OUT.gguf TYPE");
    const ember::tools::FileType* type = ember::tools::find_file_type(positional[2]);
    if (type == nullptr) {
        throw UsageError("unknown type '" + positional[2] + "' (one of " + ember::tools::file_type_names() + ")");
    }
    ember::tools::quantize_model(positional[0], positional[1], *type, options);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-quantize", [&] { return run(argc, argv); });
}

#include "server_options.hpp"

#include "cli/args.hpp"
#include "cli/text_input.hpp"

namespace ember_server {

using ember::cli::IntRange;
using ember::cli::UsageError;

const char* usage_text() {
    return "usage: ember-server -m MODEL [options]\n"
           "Serves the model over HTTP with OpenAI's API: POST /v1/chat/completions,\n"
           "POST /v1/completions, GET /v1/models, GET /health, GET /metrics (docs/server.md).\n"
           "Requests decode together in one batch (continuous batching, prefix cache).\n"
           "\n"
           "  -m, --model FILE        GGUF model (required)\n"
           "      --host ADDR         address to listen on (default 127.0.0.1)\n"
           "      --port N            port (default 8080; 0: any free port, printed on stderr)\n"
           "      --parallel N        generations at once (default 4, 1..256); a request with n\n"
           "                          or best_of > 1 runs that many\n"
           "      --queue N           further generations that may wait (default 16, 0..4096);\n"
           "                          more get 503 with Retry-After\n"
           "  -c, --ctx-size N        tokens per request, prompt and answer (default: the\n"
           "                          model's, at most 4096; 0..1048576)\n"
           "  -t, --threads N         threads (default: all, 0..1024)\n"
           "      --no-mmap           read the model into memory instead of mapping it\n"
           "      --mlock             lock the model's weights into RAM\n"
           "      --max-tokens N      most tokens a request may ask for, and its default\n"
           "                          (default 4096, 1..1048576)\n"
           "      --timeout S         seconds a request may run before it is cancelled\n"
           "                          (default 600, 1..86400)\n"
           "      --max-body BYTES    largest request body (default 8388608; 1024..1073741824);\n"
           "                          larger bodies get 413\n"
           "      --kv-type T         how the KV cache stores keys and values: f32 (default),\n"
           "                          f16, q8_0 (needs a head dimension that is a multiple of 32)\n"
           "      --kv-tokens N       KV cache pool all requests share, in tokens (default:\n"
           "                          --parallel x context; 1..1073741824); requests pause\n"
           "                          when it is full, finished prompts stay cached in it\n"
           "      --api-key KEY       require 'Authorization: Bearer KEY' on /v1/*\n"
           "      --alias NAME        model id reported by /v1/models (default: the file name)\n"
           "      --chat-template FILE  Jinja chat template to use instead of the model's (at most 1 MiB)\n"
           "  -h, --help              this text\n"
           "SIGINT or SIGTERM: stops accepting, cancels running requests, exits with 0.\n";
}

Options parse_options(int argc, char** argv) {
    Options o;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-m", "--model")) o.model = args.value();
        else if (args.is("--host")) o.host = args.value();
        else if (args.is("--port")) o.port = static_cast<int>(args.int_value(IntRange{0, 65535}));
        else if (args.is("--parallel")) o.parallel = static_cast<int>(args.int_value(IntRange{1, 256}));
        else if (args.is("--queue")) o.queue = static_cast<int>(args.int_value(IntRange{0, 4096}));
        else if (args.is("-c", "--ctx-size")) o.context = static_cast<int>(args.int_value(ember::cli::kContextRange));
        else if (args.is("-t", "--threads")) o.threads = static_cast<int>(args.int_value(ember::cli::kThreadRange));
        else if (args.is("--no-mmap")) o.use_mmap = false;
        else if (args.is("--mlock")) o.mlock = true;
        else if (args.is("--max-tokens")) o.max_tokens = static_cast<int>(args.int_value(IntRange{1, 1 << 20}));
        else if (args.is("--timeout")) o.timeout = static_cast<int>(args.int_value(IntRange{1, 86400}));
        else if (args.is("--max-body")) o.max_body = args.int_value(IntRange{1024, 1LL << 30});
        else if (args.is("--api-key")) {
            o.api_key = args.value();
            if (o.api_key.empty()) throw UsageError("--api-key: the key is empty");
        }
        else if (args.is("--alias")) o.alias = args.value();
        else if (args.is("--kv-type")) o.kv_type = args.kv_type_value();
        else if (args.is("--kv-tokens")) o.kv_tokens = args.int_value(ember::cli::kKvTokensRange);
        else if (args.is("--chat-template"))
            o.chat_template = ember::cli::read_text_input(args.value(), ember::cli::kTemplateLimit, "chat template");
        else if (args.is("-h", "--help")) o.help = true;
        else args.unknown();
    }
    if (o.help) return o;
    if (o.model.empty()) throw UsageError("missing -m MODEL (see --help)");
    return o;
}

}  // namespace ember_server

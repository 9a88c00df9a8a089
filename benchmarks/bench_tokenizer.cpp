// Tokenizer throughput: MB/s encoding ~1 MB of English text (the shared stories reference,
// repeated) with each shared vocabulary in one call and in calls of one story each (BPE keeps a
// per-call word cache, so the second figure is the cold one), plus decode throughput. CPU time
// of one thread.
//   bench_tokenizer [SHARED_DIR] [MB]
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "ember/error.hpp"
#include "gguf/gguf_file.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

// CPU time of this process (the shared build machine makes wall time noisy).
double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string shared = argc > 1 ? argv[1] : "../shared";
    const double mb = argc > 2 ? std::atof(argv[2]) : 1.0;
    std::ifstream in(shared + "/reference/stories.txt", std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "bench_tokenizer: cannot read %s/reference/stories.txt\n", shared.c_str());
        return 1;
    }
    const std::string seed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string text;
    const auto target = static_cast<std::size_t>(mb * 1024 * 1024);
    while (text.size() < target) text += seed + "\n";
    std::printf("text: %.2f MB (stories.txt repeated)\n", text.size() / 1048576.0);
    for (const char* name : {"llama-spm", "llama-bpe", "qwen2", "gpt-2"}) {
        const std::string path = shared + "/tokenizer/ggml-vocab-" + name + ".gguf";
        try {
            double t0 = cpu_seconds();
            const auto file = ember::gguf::File::open(path);
            const auto tok = ember::tokenizer::Tokenizer::from_gguf(file);
            const double load = cpu_seconds() - t0;
            (void)tok->encode(seed, false, false);  // warm-up
            t0 = cpu_seconds();
            const auto ids = tok->encode(text, false, false);
            const double enc = cpu_seconds() - t0;
            t0 = cpu_seconds();
            std::size_t n_small = 0, bytes_small = 0;
            while (bytes_small < text.size()) {
                n_small += tok->encode(seed, false, false).size();
                bytes_small += seed.size();
            }
            const double enc_small = cpu_seconds() - t0;
            t0 = cpu_seconds();
            const std::string back = tok->decode(ids);
            const double dec = cpu_seconds() - t0;
            std::printf("%-10s load %5.0f ms  encode %6.2f MB/s (%zu tokens), per story %6.2f MB/s"
                        "  decode %7.1f MB/s  %s\n",
                        name, load * 1e3, text.size() / 1048576.0 / enc, ids.size(),
                        bytes_small / 1048576.0 / enc_small,
                        back.size() / 1048576.0 / dec, back == text ? "round trip ok" : "ROUND TRIP FAILED");
        } catch (const ember::Error& e) {
            std::printf("%-10s skipped: %s\n", name, e.what());
        }
    }
    return 0;
}

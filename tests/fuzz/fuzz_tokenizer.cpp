// Any bytes (invalid UTF-8, control tokens written out, long runs) through the shared
// vocabularies' tokenizers: SPM (llama), byte-level BPE (gpt-2, qwen2, llama-bpe). The first byte
// picks the vocabulary and the flags; encode, then decode what it gave. Vocabularies load once,
// from EMBER_SHARED_DIR (or the configured default); without them the target does nothing.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ember/error.hpp"
#include "fuzz_target.hpp"
#include "gguf/gguf_file.hpp"
#include "tokenizer/tokenizer.hpp"

namespace {

std::vector<std::unique_ptr<ember::tokenizer::Tokenizer>> load_vocabularies() {
    const char* env = std::getenv("EMBER_SHARED_DIR");
    const std::filesystem::path dir = std::filesystem::path(env && *env ? env : EMBER_DEFAULT_SHARED_DIR) / "tokenizer";
    std::vector<std::unique_ptr<ember::tokenizer::Tokenizer>> out;
    for (const char* name : {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-qwen2.gguf",
                             "ggml-vocab-llama-bpe.gguf"}) {
        const std::filesystem::path path = dir / name;
        if (!std::filesystem::exists(path)) continue;
        out.push_back(ember::tokenizer::Tokenizer::from_gguf(ember::gguf::File::open(path.string())));
    }
    if (out.empty()) std::fprintf(stderr, "fuzz tokenizer: no vocabularies in %s: nothing to run\n", dir.c_str());
    return out;
}

}  // namespace

EMBER_FUZZ_TARGET(tokenizer) {
    static const auto vocabularies = load_vocabularies();
    if (vocabularies.empty() || size == 0) return;
    const auto& tok = *vocabularies[data[0] % vocabularies.size()];
    const bool add_bos = (data[0] & 0x10) != 0, parse_special = (data[0] & 0x20) != 0;
    const std::vector<ember::Token> ids = tok.encode(ember_fuzz::as_text(data + 1, size - 1), add_bos, parse_special);
    (void)tok.decode(ids, (data[0] & 0x40) != 0);
}

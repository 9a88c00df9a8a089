// A sentencepiece ModelProto (tokenizer.model files; tokenizer.ggml.model in some GGUFs).
#include "ember/error.hpp"
#include "fuzz_target.hpp"
#include "tokenizer/sp_proto.hpp"

EMBER_FUZZ_TARGET(sentencepiece) {
    try {
        (void)ember::tokenizer::sp_proto::parse(ember_fuzz::as_text(data, size), "fuzz input");
    } catch (const ember::Error&) {
    }
}

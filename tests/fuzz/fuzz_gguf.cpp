// A whole GGUF file from memory: header, metadata, tensors, the architecture's checks, the
// tokenizer; then a round trip through the tokenizer when it loads.
#include "ember/error.hpp"
#include "ember/model.hpp"
#include "fuzz_target.hpp"

EMBER_FUZZ_TARGET(gguf) {
    try {
        const ember::Model model = ember::Model::load_from_memory(data, size);
        (void)model.detokenize(model.tokenize("Once upon a time"));
    } catch (const ember::Error&) {
    }
}

// llama: Llama 1/2/3, TinyLlama, Mistral, SmolLM. Adjacent-pair RoPE over the whole head
// (optionally Llama 3's rope_freqs), SwiGLU, optional q/k/v/o biases, tied output when
// output.weight is absent.
#include "model/arch.hpp"

namespace ember::model {

const ArchDescription kArchLlama = [] {
    ArchDescription a;
    a.name = "llama";
    a.models = "Llama 1/2/3, TinyLlama, Mistral, SmolLM";
    a.rope = RopeStyle::normal;
    a.activation = Activation::silu;
    a.layer.qkv_bias = Need::optional;
    a.layer.output_bias = Need::optional;
    a.tensors.rope_freqs = Need::optional;
    a.partial_rotary = false;
    return a;
}();

}  // namespace ember::model

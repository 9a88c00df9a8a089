// Builds metadata-only GGUF files for configuration tests (ModelConfig reads metadata only).
#pragma once

#include <string>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "gguf/gguf_writer.hpp"

namespace model_test {

/// A writer holding the keys of a small model of architecture `arch` (head size 8, 4 layers).
inline ember::gguf::Writer small_model_keys(const std::string& arch) {
    ember::gguf::Writer w;
    w.set_string("general.architecture", arch);
    w.set_u32(arch + ".context_length", 2048);
    w.set_u32(arch + ".embedding_length", 64);
    w.set_u32(arch + ".block_count", 4);
    w.set_u32(arch + ".feed_forward_length", 128);
    w.set_u32(arch + ".attention.head_count", 8);
    w.set_u32(arch + ".attention.head_count_kv", 4);
    w.set_f32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    return w;
}

/// The file the writer describes, loaded from memory under `name`.
inline ember::gguf::File load(const ember::gguf::Writer& w, const std::string& name = "test.gguf") {
    const std::vector<std::uint8_t> bytes = w.write_to_bytes();
    return ember::gguf::File::from_copy(bytes.data(), bytes.size(), name);
}

}  // namespace model_test

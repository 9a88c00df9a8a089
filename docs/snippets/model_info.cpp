// docs/api.md: GGUF metadata, the memory estimate before loading, prefill progress and TTFT.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <ember/ember.hpp>

void model_info_example(const std::string& path, const std::vector<ember::Token>& prompt) {
    // [snippet:memory]
    ember::MemoryEstimate need = ember::Model::estimate_memory(path, {.context = 4096});
    std::printf("weights %lld MiB, KV %lld bytes/token (F32), one session %lld MiB\n",
                static_cast<long long>(need.weight_bytes >> 20),
                static_cast<long long>(need.kv_bytes_per_token_f32),
                static_cast<long long>(need.session_bytes >> 20));
    // [snippet:memory]
    // [snippet:metadata]
    ember::Model model = ember::Model::load(path);
    std::optional<std::string> arch = model.metadata_string("general.architecture");
    std::optional<std::int64_t> layers = model.metadata_int(*arch + ".block_count");
    std::optional<std::vector<std::string>> vocab = model.metadata_string_array("tokenizer.ggml.tokens");
    if (model.metadata_type("general.license") == ember::MetadataType::absent) std::puts("no license key");
    // [snippet:metadata]
    (void)layers, (void)vocab;
    // [snippet:progress]
    ember::Session session(model, {.context = 4096});
    session.set_progress_callback([](std::int64_t done, std::int64_t total) {
        std::fprintf(stderr, "\rprompt %lld/%lld", static_cast<long long>(done), static_cast<long long>(total));
    });
    session.prefill(prompt);
    std::printf("TTFT of this prefill: %.1f ms\n", session.metrics().last_ttft_seconds * 1000.0);
    // [snippet:progress]
}

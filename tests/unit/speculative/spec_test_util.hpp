// Helpers for the speculative-decoding tests: stories260K (target) and its Q4_0 quantization
// (draft), loaded once; plain and speculative generation from a prompt.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "support/shared_data.hpp"

namespace spec_test {

inline constexpr const char* kTarget = "models/stories260K.gguf";
inline constexpr const char* kDraft = "models/stories260K-Q4_0.gguf";

inline const ember::Model& load_once(const char* relative) {
    static std::vector<std::pair<std::string, std::unique_ptr<ember::Model>>> loaded;
    for (const auto& [name, model] : loaded) {
        if (name == relative) return *model;
    }
    ember::ModelOptions o;
    o.threads = 1;
    loaded.emplace_back(relative, std::make_unique<ember::Model>(
                                      ember::Model::load(ember_test::shared_file(relative).string(), o)));
    return *loaded.back().second;
}
inline const ember::Model& target() { return load_once(kTarget); }
inline const ember::Model& draft() { return load_once(kDraft); }

inline ember::SessionOptions sopts(int context, int batch = 512) {
    ember::SessionOptions o;
    o.context = context;
    o.threads = 1;
    o.batch = batch;
    return o;
}

inline ember::SamplerOptions greedy_options() {
    ember::SamplerOptions o;
    o.temperature = 0.0f;
    return o;
}

inline ember::SpeculativeOptions draft_options(const ember::Model& draft, int max_draft = 8, bool adaptive = true) {
    ember::SpeculativeOptions o;
    o.draft = &draft;
    o.max_draft = max_draft;
    o.adaptive = adaptive;
    return o;
}

inline ember::SpeculativeOptions lookup_options(int ngram, int max_draft = 8, bool adaptive = true) {
    ember::SpeculativeOptions o;
    o.lookup_ngram = ngram;
    o.max_draft = max_draft;
    o.adaptive = adaptive;
    return o;
}

/// What a generate() call gave, and the session afterwards.
struct Run {
    ember::GenerateResult result;
    std::vector<ember::Token> session_tokens;
    std::vector<float> logits;
    ember::Metrics metrics;
};

/// Prefills `prompt` into a fresh session and generates with `sampling` (and `speculator`
/// when not null).
inline Run generate(const ember::Model& model, const std::vector<ember::Token>& prompt,
                    const ember::SamplerOptions& sampling, ember::GenerateOptions g,
                    ember::Speculator* speculator, ember::SessionOptions so) {
    ember::Session s(model, so);
    ember::Sampler sampler(sampling);
    for (ember::Token t : prompt) sampler.accept(t);
    if (s.prefill(prompt) != ember::Status::ok) throw std::runtime_error("prefill failed");
    g.speculative = speculator;
    Run run{s.generate(sampler, g), s.tokens(), {s.logits().begin(), s.logits().end()}, s.metrics()};
    return run;
}

inline ember::GenerateOptions gopts(int max_tokens, std::vector<std::string> stop = {}) {
    ember::GenerateOptions g;
    g.max_tokens = max_tokens;
    g.stop = std::move(stop);
    return g;
}

struct ReferenceCase {
    std::string prompt, model;
    int n = 0;
    std::vector<ember::Token> ids;
};

/// ../shared/reference/stories260K-greedy.txt: llama.cpp's greedy ids (BOS, prompt, continuation).
inline std::vector<ReferenceCase> read_reference() {
    std::ifstream in(ember_test::shared_file("reference/stories260K-greedy.txt"));
    std::vector<ReferenceCase> cases;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("### PROMPT: ", 0) == 0) {
            cases.push_back({line.substr(12), "", 0, {}});
        } else if (line.rfind("### MODEL: ", 0) == 0 && !cases.empty()) {
            std::istringstream ss(line.substr(11));
            std::string n_field;
            ss >> cases.back().model >> n_field;
            cases.back().n = std::stoi(n_field.substr(2));
        } else if (line.rfind("IDS: ", 0) == 0 && !cases.empty()) {
            std::istringstream ss(line.substr(5));
            for (int id; ss >> id;) cases.back().ids.push_back(id);
        }
    }
    return cases;
}

}  // namespace spec_test

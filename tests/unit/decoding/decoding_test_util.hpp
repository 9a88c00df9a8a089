// Helpers for the decoding tests: stories260K, sessions after a prompt, the beam reference file.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.hpp"
#include "support/shared_data.hpp"
#include "unit/session/session_test_util.hpp"

namespace decoding_test {

using session_test::kModel;
using session_test::stories;

inline constexpr const char* kBeamReference = "reference/stories260K-beam.txt";

/// A session of `threads` threads after `prompt` (with BOS).
inline ember::Session session_after(const std::string& prompt, int threads = 1, int context = 256) {
    ember::SessionOptions o;
    o.context = context;
    o.threads = threads;
    ember::Session s(stories(), o);
    s.prefill(stories().tokenize(prompt));
    return s;
}

/// One case of stories260K-beam.txt.
struct BeamCase {
    std::string prompt, model;
    int n = 0, beams = 0;
    std::vector<ember::Token> ids;
    double logprob = 0.0;
    std::string text;
};

inline std::vector<BeamCase> read_beam_cases(const std::string& path) {
    std::ifstream in(path);
    std::vector<BeamCase> cases;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("### PROMPT: ", 0) == 0) {
            cases.push_back({});
            cases.back().prompt = line.substr(12);
        } else if (line.rfind("### MODEL: ", 0) == 0 && !cases.empty()) {
            std::istringstream ss(line.substr(11));
            std::string n, beams;
            ss >> cases.back().model >> n >> beams;
            cases.back().n = std::stoi(n.substr(2));
            cases.back().beams = std::stoi(beams.substr(6));
        } else if (line.rfind("IDS: ", 0) == 0 && !cases.empty()) {
            std::istringstream ss(line.substr(5));
            for (ember::Token t; ss >> t;) cases.back().ids.push_back(t);
        } else if (line.rfind("LOGPROB: ", 0) == 0 && !cases.empty()) {
            cases.back().logprob = std::stod(line.substr(9));
        } else if (line.rfind("TEXT: ", 0) == 0 && !cases.empty()) {
            cases.back().text = line.substr(6);
        }
    }
    return cases;
}

}  // namespace decoding_test

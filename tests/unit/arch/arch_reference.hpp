// Reads ../shared/reference/arch-greedy.txt: llama.cpp's greedy continuations (prompt, model
// file, number of generated tokens, text of prompt and continuation) for the architecture files.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/shared_data.hpp"

namespace arch_test {

struct GreedyCase {
    std::string prompt, model, text;
    int n = 0;
};

inline std::vector<GreedyCase> read_greedy_reference() {
    std::ifstream in(ember_test::shared_file("reference/arch-greedy.txt"));
    std::stringstream all;
    all << in.rdbuf();
    const std::string raw = all.str();
    std::vector<GreedyCase> cases;
    const std::string marker = "### PROMPT: ";
    for (std::size_t at = raw.find(marker); at != std::string::npos;) {
        const std::size_t next = raw.find("\n" + marker, at);
        const std::string block = raw.substr(at, next == std::string::npos ? std::string::npos : next - at);
        GreedyCase c;
        std::istringstream lines(block);
        std::string line;
        std::getline(lines, line);
        c.prompt = line.substr(marker.size());
        std::getline(lines, line);  // ### MODEL: name N=64
        std::istringstream fields(line.substr(11));
        std::string n_field;
        fields >> c.model >> n_field;
        c.n = std::stoi(n_field.substr(2));
        std::getline(lines, line);  // IDS: -
        const std::size_t text_at = block.find("\nTEXT: ");
        c.text = block.substr(text_at + 7);
        while (!c.text.empty() && c.text.back() == '\n') c.text.pop_back();
        cases.push_back(c);
        at = next == std::string::npos ? next : next + 1;
    }
    return cases;
}

/// llama.cpp's perplexity (context 128 on reference/stories.txt) of an architecture file, or
/// a negative value when the reference does not list it.
inline double reference_perplexity(const std::string& model) {
    std::ifstream in(ember_test::shared_file("reference/arch-perplexity.txt"));
    std::string name;
    double ppl = 0;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        if (fields >> name >> ppl && name == model) return ppl;
    }
    return -1;
}

}  // namespace arch_test

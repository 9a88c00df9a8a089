// Shared helpers for the tokenizer tests: the llama.cpp vocab suites (*.gguf.inp / *.gguf.out)
// and cached tokenizers for the shared vocabularies.
#pragma once

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_file.hpp"
#include "support/shared_data.hpp"
#include "tokenizer/tokenizer.hpp"
#include "runtime/utf8.hpp"

namespace tok_test {

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Cases of a .inp file: each case is followed by "\n__ggml_vocab_test__\n" (the newline before
/// the separator is part of the separator, not of the case), as llama.cpp's test-tokenizer-0.
inline std::vector<std::string> read_cases(const std::string& path) {
    const std::string text = read_file(path);
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> cases;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t next = text.find(sep, pos);
        if (next == std::string::npos) break;  // trailing bytes without a separator: none expected
        cases.push_back(text.substr(pos, next - pos));
        pos = next + sep.size();
    }
    return cases;
}

/// Lines of a .out file: space-separated ids, one line per case.
inline std::vector<std::vector<ember::Token>> read_expected(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<ember::Token>> out;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ss(line);
        std::vector<ember::Token> ids;
        long v = 0;
        while (ss >> v) ids.push_back(static_cast<ember::Token>(v));
        out.push_back(std::move(ids));
    }
    return out;
}

/// Loads (once per process) the tokenizer of a shared GGUF vocabulary, e.g.
/// "tokenizer/ggml-vocab-qwen2.gguf".
inline const ember::tokenizer::Tokenizer& shared_tokenizer(const std::string& relative) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<ember::tokenizer::Tokenizer>> cache;
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = cache[relative];
    if (!slot) {
        const auto file = ember::gguf::File::open(ember_test::shared_file(relative).string());
        slot = ember::tokenizer::Tokenizer::from_gguf(file);
    }
    return *slot;
}

inline std::string ids_to_string(const std::vector<ember::Token>& ids) {
    std::string s;
    for (const auto id : ids) s += " " + std::to_string(id);
    return s;
}

/// Random valid UTF-8 mixing ASCII, whitespace, Latin, Cyrillic, CJK, emoji and combining marks.
inline std::string random_utf8(std::mt19937& rng, int n_chars, bool allow_nul = false) {
    static const std::vector<std::pair<char32_t, char32_t>> ranges = {
        {0x20, 0x7E}, {0x20, 0x7E}, {0x20, 0x7E}, {0x61, 0x7A}, {0x09, 0x0D}, {0xA0, 0xFF},
        {0x100, 0x17F}, {0x300, 0x36F}, {0x400, 0x4FF}, {0x600, 0x6FF}, {0x900, 0x97F},
        {0x3000, 0x303F}, {0x4E00, 0x9FFF}, {0xAC00, 0xD7A3}, {0x1F300, 0x1F64F}, {0x10000, 0x10FFFF},
        {0xE000, 0xFFFD},
    };
    std::string s;
    for (int i = 0; i < n_chars; ++i) {
        const auto& r = ranges[std::uniform_int_distribution<std::size_t>(0, ranges.size() - 1)(rng)];
        char32_t cp = std::uniform_int_distribution<std::uint32_t>(r.first, r.second)(rng);
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 'x';
        if (cp == 0 && !allow_nul) cp = ' ';
        ember::append_utf8(s, cp);
    }
    return s;
}

}  // namespace tok_test

// What the tools' tests share: a scratch folder per process and reading files back.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tools_test {

/// A folder of this process under the system's temporary directory, `tag` naming the test.
inline std::filesystem::path temp_dir(const std::string& tag) {
    const auto d = std::filesystem::temp_directory_path() / ("ember_test_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
}

inline std::vector<char> read_all(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

}  // namespace tools_test

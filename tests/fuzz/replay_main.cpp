// fuzz_replay TARGET PATH...: runs fuzz target TARGET over each file (a directory: each file in
// it, sorted) and prints how many ran. A target that crashes or lets an exception other than
// ember::Error escape ends the process abnormally, which fails the test that runs it.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fuzz_target.hpp"

namespace ember_fuzz {
namespace {

std::map<std::string, Target>& targets() {
    static std::map<std::string, Target> all;
    return all;
}

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

bool add_target(const char* name, Target target) {
    targets()[name] = target;
    return true;
}

}  // namespace ember_fuzz

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    const auto& all = ember_fuzz::targets();
    const auto it = argc >= 3 ? all.find(argv[1]) : all.end();
    if (it == all.end()) {
        std::fprintf(stderr, "usage: fuzz_replay TARGET PATH...   (targets:");
        for (const auto& [name, target] : all) std::fprintf(stderr, " %s", name.c_str());
        std::fprintf(stderr, ")\n");
        return 2;
    }
    std::vector<fs::path> files;
    for (int i = 2; i < argc; ++i) {
        const fs::path path = argv[i];
        if (fs::is_directory(path)) {
            std::vector<fs::path> in_dir;
            for (const auto& entry : fs::directory_iterator(path)) {
                if (entry.is_regular_file()) in_dir.push_back(entry.path());
            }
            std::sort(in_dir.begin(), in_dir.end());
            files.insert(files.end(), in_dir.begin(), in_dir.end());
        } else if (fs::is_regular_file(path)) {
            files.push_back(path);
        } else {
            std::fprintf(stderr, "fuzz_replay: %s: not found\n", path.c_str());
            return 2;
        }
    }
    for (const fs::path& file : files) {
        const std::vector<std::uint8_t> bytes = ember_fuzz::read_file(file);
        std::fprintf(stderr, "fuzz_replay %s: %s (%zu bytes)\n", argv[1], file.filename().c_str(), bytes.size());
        it->second(bytes.data(), bytes.size());
    }
    std::printf("fuzz_replay %s: %zu inputs ran\n", argv[1], files.size());
    return files.empty() ? 1 : 0;
}

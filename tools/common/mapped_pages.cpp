#include "common/mapped_pages.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ember::tools {

namespace {

// A field line is "Name:   123 kB"; a mapping's header is "start-end perms offset dev inode path".
bool is_field(const std::string& line) {
    const auto colon = line.find(':');
    const auto space = line.find(' ');
    return colon != std::string::npos && (space == std::string::npos || colon < space);
}

// The path of a header: what follows the inode (the sixth column), spaces inside it kept.
std::string header_path(const std::string& line) {
    std::size_t at = 0;
    for (int column = 0; column < 5; ++column) {
        at = line.find_first_not_of(' ', at);
        if (at == std::string::npos) return {};
        at = line.find(' ', at);
        if (at == std::string::npos) return {};
    }
    at = line.find_first_not_of(' ', at);
    return at == std::string::npos ? std::string() : line.substr(at);
}

std::uint64_t field_bytes(const std::string& line) {
    std::istringstream in(line.substr(line.find(':') + 1));
    std::uint64_t kib = 0;
    in >> kib;
    return in ? kib * 1024 : 0;
}

}  // namespace

MappedPages parse_mapped_pages(std::istream& smaps, const std::string& path) {
    MappedPages pages;
    bool inside = false;
    std::string line;
    while (std::getline(smaps, line)) {
        if (!is_field(line)) {
            inside = header_path(line) == path;
        } else if (inside && line.rfind("Rss:", 0) == 0) {
            pages.resident_bytes += field_bytes(line);
        } else if (inside && line.rfind("FilePmdMapped:", 0) == 0) {
            pages.huge_bytes += field_bytes(line);
        }
    }
    return pages;
}

std::optional<MappedPages> mapped_file_pages(const std::string& path) {
    std::error_code ec;
    const auto canonical = std::filesystem::canonical(path, ec);
    if (ec) return std::nullopt;
    std::ifstream smaps("/proc/self/smaps");
    if (!smaps) return std::nullopt;
    return parse_mapped_pages(smaps, canonical.string());
}

}  // namespace ember::tools

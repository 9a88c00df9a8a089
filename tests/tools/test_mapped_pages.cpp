// ember-bench's account of how the model file is mapped: smaps text parsed, and on Linux this
// process's own mapping of a file it touched.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/mapped_pages.hpp"

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

using ember::tools::MappedPages;
using ember::tools::parse_mapped_pages;

TEST_CASE("mapped pages: smaps entries of one path are summed, others ignored", "[bench]") {
    std::istringstream smaps(
        "7f0000000000-7f0000400000 r--p 00000000 fe:01 1234                       /models/a b.gguf\n"
        "Size:               4096 kB\n"
        "Rss:                3072 kB\n"
        "FilePmdMapped:      2048 kB\n"
        "VmFlags: rd mr mw me hg\n"
        "7f0000400000-7f0000600000 rw-p 00000000 00:00 0 \n"
        "Rss:                2048 kB\n"
        "FilePmdMapped:      2048 kB\n"
        "7f0000600000-7f0000800000 r--p 00400000 fe:01 1234                       /models/a b.gguf\n"
        "Rss:                 100 kB\n"
        "FilePmdMapped:         0 kB\n"
        "7f0000800000-7f0000a00000 r--p 00000000 fe:01 99                         /models/a b.gguf.bak\n"
        "Rss:                1000 kB\n");
    const MappedPages p = parse_mapped_pages(smaps, "/models/a b.gguf");
    CHECK(p.resident_bytes == (3072 + 100) * 1024ull);
    CHECK(p.huge_bytes == 2048 * 1024ull);

    std::istringstream none("7f0000000000-7f0000400000 r--p 00000000 fe:01 1 /x\nRss: 4 kB\n");
    CHECK(parse_mapped_pages(none, "/y").resident_bytes == 0);
}

TEST_CASE("mapped pages: a touched mapping of a file shows as resident", "[bench]") {
#if !defined(__linux__)
    SKIP("smaps is Linux's");
#else
    const auto path = std::filesystem::temp_directory_path() / ("ember-mapped-pages-" + std::to_string(::getpid()));
    const std::size_t size = std::size_t{1} << 20;
    {
        std::ofstream out(path, std::ios::binary);
        const std::vector<char> bytes(size, 'x');
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    REQUIRE(p != MAP_FAILED);
    unsigned sum = 0;
    for (std::size_t i = 0; i < size; i += 4096) sum += static_cast<const unsigned char*>(p)[i];
    CHECK(sum == 'x' * (size / 4096));
    const auto pages = ember::tools::mapped_file_pages(path.string());
    REQUIRE(pages.has_value());
    CHECK(pages->resident_bytes == size);
    CHECK(pages->huge_bytes <= pages->resident_bytes);
    ::munmap(p, size);
    ::close(fd);
    const auto after = ember::tools::mapped_file_pages(path.string());
    REQUIRE(after.has_value());
    CHECK(after->resident_bytes == 0);
    std::filesystem::remove(path);
    CHECK_FALSE(ember::tools::mapped_file_pages(path.string()).has_value());
#endif
}

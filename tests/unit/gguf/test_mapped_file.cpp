// MappedFile: read into memory (use_mmap = false) gives the mapped bytes and survives changes
// to the file; released pages leave
// this process's memory while their bytes stay readable; lock() locks or names the limit.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ember/error.hpp"
#include "gguf/gguf_file.hpp"
#include "gguf/mapped_file.hpp"
#include "support/shared_data.hpp"

using ember::gguf::MappedFile;

namespace {

// Resident pages of this process (/proc/self/statm, second field), in bytes.
std::int64_t resident_bytes() {
    std::ifstream in("/proc/self/statm");
    std::int64_t size = 0, resident = 0;
    in >> size >> resident;
    return resident * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
}

struct TempFile {
    std::string path;
    std::vector<std::uint8_t> bytes;
    explicit TempFile(std::size_t n) {
        path = (std::filesystem::temp_directory_path() / ("ember_test_mapped_" + std::to_string(::getpid()))).string();
        std::mt19937 rng(7);
        bytes.resize(n);
        for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
        std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                    static_cast<std::streamsize>(n));
    }
    ~TempFile() { std::filesystem::remove(path); }
};

// Reads a byte of every page, so that all are resident.
void touch_all(const MappedFile& f) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < f.size(); i += 512) sum += f.data()[i];
    volatile std::uint64_t keep = sum;
    (void)keep;
}

}  // namespace

TEST_CASE("MappedFile: mapped or read into memory, the same bytes", "[gguf][mapped]") {
    const TempFile tmp((std::size_t{40} << 20) + 12345);  // not a whole number of pages or slices
    for (const bool use_mmap : {true, false}) {
        CAPTURE(use_mmap);
        const MappedFile f = MappedFile::open(tmp.path, use_mmap);
        REQUIRE(f.size() == tmp.bytes.size());
        CHECK(std::equal(tmp.bytes.begin(), tmp.bytes.end(), f.data()));
    }
    CHECK_THROWS_WITH(MappedFile::open(tmp.path + ".missing", false), Catch::Contains(".missing"));
}

TEST_CASE("MappedFile: copy() gives the bytes of any range, mapped, read, or released", "[gguf][mapped]") {
    const TempFile tmp((std::size_t{3} << 20) + 777);
    for (const bool use_mmap : {true, false}) {
        CAPTURE(use_mmap);
        MappedFile f = MappedFile::open(tmp.path, use_mmap);
        const std::size_t ranges[][2] = {{0, 1}, {4095, 2}, {12345, 1 << 20}, {0, tmp.bytes.size()},
                                         {tmp.bytes.size() - 3, 3}, {100, 0}};
        for (const auto& [off, n] : ranges) {
            CAPTURE(off, n);
            std::vector<std::uint8_t> out(n + 1, 0xA5);
            f.copy({f.data() + off, n}, out.data());
            CHECK(std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), tmp.bytes.begin() + static_cast<std::ptrdiff_t>(off)));
            CHECK(out[n] == 0xA5);  // nothing written past the range
        }
        f.release({f.data() + 8192, std::size_t{1} << 20});
        std::vector<std::uint8_t> out(std::size_t{2} << 20);
        f.copy({f.data(), out.size()}, out.data());
        CHECK(std::equal(out.begin(), out.end(), tmp.bytes.begin()));
    }
    // Bytes that are not the file's own (a buffer given by the caller) are copied as they are.
    const std::vector<std::uint8_t> other{1, 2, 3, 4};
    const MappedFile f = MappedFile::open(tmp.path, true);
    std::uint8_t out[4] = {};
    f.copy({other.data(), other.size()}, out);
    CHECK(std::equal(other.begin(), other.end(), out));
}

TEST_CASE("MappedFile: released pages leave memory, their bytes stay readable", "[gguf][mapped]") {
    const TempFile tmp(std::size_t{64} << 20);
    for (const bool use_mmap : {true, false}) {
        CAPTURE(use_mmap);
        MappedFile f = MappedFile::open(tmp.path, use_mmap);
        touch_all(f);
        const std::int64_t before = resident_bytes();
        // Release 48 MiB from an unaligned start: only whole pages inside the range go.
        const std::size_t first = 4096 * 100 + 17, n = std::size_t{48} << 20;
        f.release({f.data() + first, n});
        const std::int64_t after = resident_bytes();
        CHECK(before - after > (std::int64_t{46} << 20));
        // The bytes next to the range and inside it read as in the file.
        CHECK(f.data()[first - 1] == tmp.bytes[first - 1]);
        CHECK(f.data()[first] == tmp.bytes[first]);
        CHECK(std::equal(tmp.bytes.begin(), tmp.bytes.end(), f.data()));
        // Out-of-range and empty releases do nothing.
        f.release({f.data(), std::size_t{0}});
        f.release({tmp.bytes.data(), tmp.bytes.size()});
    }
}

TEST_CASE("MappedFile: read_into_memory() keeps the bytes not released, whatever the file does next",
          "[gguf][mapped]") {
    // 5 MiB and a bit: memory of 2 MiB and 4 KiB pages, and a partial last page.
    const TempFile tmp((std::size_t{5} << 20) + 1234);
    MappedFile f = MappedFile::open(tmp.path, /*use_mmap=*/false);
    const std::size_t first = (std::size_t{1} << 20) + 100, n = std::size_t{1} << 20;
    f.release({f.data() + first, n});  // read from the file while mapped: stays mapped
    f.read_into_memory();
    f.read_into_memory();  // a second call does nothing
    const std::uint8_t* released = f.data() + first + 4096;
    const std::uint8_t want_released = *released;
    // The file is overwritten in place and then shrinks to nothing: the bytes read into memory
    // stay as they were (through the mapping they would change, then fault with SIGBUS).
    {
        std::vector<std::uint8_t> other(tmp.bytes.size(), 0x5a);
        std::fstream(tmp.path, std::ios::binary | std::ios::in | std::ios::out)
            .write(reinterpret_cast<const char*>(other.data()), static_cast<std::streamsize>(other.size()));
    }
    CHECK(*released == 0x5a);  // the released range is still the mapping: it sees the new bytes
    CHECK(want_released == tmp.bytes[first + 4096]);
    std::filesystem::resize_file(tmp.path, 0);
    CHECK(std::equal(tmp.bytes.begin(), tmp.bytes.begin() + static_cast<std::ptrdiff_t>(first), f.data()));
    const std::size_t tail = first + n + 4096;
    CHECK(std::equal(tmp.bytes.begin() + static_cast<std::ptrdiff_t>(tail), tmp.bytes.end(), f.data() + tail));
    CHECK(f.data()[f.size() - 1] == tmp.bytes.back());
}

TEST_CASE("MappedFile: read_into_memory() of a file that shrank since it was opened names it", "[gguf][mapped]") {
    const TempFile tmp(std::size_t{3} << 20);
    MappedFile f = MappedFile::open(tmp.path, /*use_mmap=*/false);
    std::filesystem::resize_file(tmp.path, std::size_t{1} << 20);
    CHECK_THROWS_WITH(f.read_into_memory(), Catch::Contains(tmp.path) && Catch::Contains("shorter than its size"));
}

TEST_CASE("MappedFile: lock() locks what was not released, or names RLIMIT_MEMLOCK", "[gguf][mapped]") {
    const TempFile tmp(std::size_t{4} << 20);
    MappedFile f = MappedFile::open(tmp.path);
    f.release({f.data() + (1 << 20), std::size_t{1} << 20});
    try {
        f.lock();
        CHECK(std::equal(tmp.bytes.begin(), tmp.bytes.end(), f.data()));
        f.release({f.data(), f.size()});  // locked: releasing is refused, bytes stay
        CHECK(f.data()[0] == tmp.bytes[0]);
    } catch (const ember::Error& e) {
        CHECK_THAT(e.what(), Catch::Contains(tmp.path) && Catch::Contains("RLIMIT_MEMLOCK"));
    }
}

#include "runtime/zeroed_memory.hpp"

#include <cerrno>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "runtime/fail.hpp"
#include "runtime/memory.hpp"

namespace ember {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

namespace detail {

void* map_zeroed(std::size_t bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

void unmap_zeroed(void* p, std::size_t bytes) noexcept { ::munmap(p, bytes); }

}  // namespace detail

std::shared_ptr<std::uint8_t> allocate_zeroed_pages(std::size_t bytes, const std::string& what) {
    const long page_l = ::sysconf(_SC_PAGESIZE);
    const std::size_t page = page_l > 0 ? static_cast<std::size_t>(page_l) : 4096;
    if (bytes == 0) bytes = 1;
    if (bytes > SIZE_MAX - 2 * kHugePage) fail(what + ": cannot allocate " + std::to_string(bytes) + " bytes");
    const std::size_t size = round_up(bytes, page);
    // Over-allocate by one huge page to place the start on a 2 MiB boundary, then trim.
    const bool huge = size >= kHugePage;
    const std::size_t span = huge ? size + kHugePage : size;
    void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        const int err = errno;
        fail(what + ": cannot allocate " + format_bytes(bytes) + ": " + std::strerror(err));
    }
    auto* base = static_cast<std::uint8_t*>(raw);
    auto* start = base;
    if (huge) {
        const auto addr = reinterpret_cast<std::uintptr_t>(base);
        start = base + (round_up(addr, kHugePage) - addr);
        if (start > base) ::munmap(base, static_cast<std::size_t>(start - base));
        const std::size_t tail = static_cast<std::size_t>(base + span - (start + size));
        if (tail > 0) ::munmap(start + size, tail);
#ifdef MADV_HUGEPAGE
        ::madvise(start, size, MADV_HUGEPAGE);  // advice only: without huge pages, 4 KiB pages serve
#endif
    }
    return std::shared_ptr<std::uint8_t>(start, [size](std::uint8_t* p) { ::munmap(p, size); });
}

}  // namespace ember

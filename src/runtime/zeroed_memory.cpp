#include "runtime/zeroed_memory.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

#include <sys/mman.h>
#include <unistd.h>

#include "runtime/fail.hpp"
#include "runtime/memory.hpp"

namespace ember {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
std::atomic<std::size_t> g_mapped{0};

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

namespace detail {

void* map_zeroed(std::size_t bytes, bool huge_pages) {
    const std::size_t page = page_size();
    if (bytes == 0 || bytes > SIZE_MAX - 2 * kHugePage) {
        errno = bytes == 0 ? EINVAL : ENOMEM;
        return nullptr;
    }
    const std::size_t size = round_up(bytes, page);
    // Huge pages: over-allocate by one to place the start on a 2 MiB boundary, then trim.
    const bool huge = huge_pages && size >= kHugePage;
    const std::size_t span = huge ? size + kHugePage : size;
    void* raw = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    auto* base = static_cast<std::uint8_t*>(raw);
    g_mapped.fetch_add(size, std::memory_order_relaxed);
    if (!huge) return base;
    const auto addr = reinterpret_cast<std::uintptr_t>(base);
    auto* start = base + (round_up(addr, kHugePage) - addr);
    if (start > base) ::munmap(base, static_cast<std::size_t>(start - base));
    const std::size_t tail = static_cast<std::size_t>(base + span - (start + size));
    if (tail > 0) ::munmap(start + size, tail);
#ifdef MADV_HUGEPAGE
    ::madvise(start, size, MADV_HUGEPAGE);  // advice only: without huge pages, 4 KiB pages serve
#endif
    return start;
}

void unmap_zeroed(void* p, std::size_t bytes) noexcept {
    if (p != nullptr && ::munmap(p, bytes) == 0) g_mapped.fetch_sub(round_up(bytes, page_size()), std::memory_order_relaxed);
}

std::size_t mapped_zeroed_bytes() noexcept { return g_mapped.load(std::memory_order_relaxed); }

}  // namespace detail

std::shared_ptr<std::uint8_t> allocate_zeroed_pages(std::size_t bytes, const std::string& what) {
    if (bytes == 0) bytes = 1;
    if constexpr (detail::kMapThreshold == SIZE_MAX) {  // AddressSanitizer: see kMapThreshold
        if (bytes > SIZE_MAX - 2 * kHugePage) fail(what + ": cannot allocate " + std::to_string(bytes) + " bytes");
        const std::size_t align = bytes >= kHugePage ? kHugePage : 64;
        std::uint8_t* p = nullptr;
        try {
            p = static_cast<std::uint8_t*>(::operator new(bytes, std::align_val_t{align}));
        } catch (const std::bad_alloc&) {
            fail(what + ": cannot allocate " + format_bytes(bytes));
        }
        std::memset(p, 0, bytes);
        return std::shared_ptr<std::uint8_t>(p, [align](std::uint8_t* q) { ::operator delete(q, std::align_val_t{align}); });
    }
    void* p = detail::map_zeroed(bytes, /*huge_pages=*/true);
    if (p == nullptr) {
        const int err = errno;
        fail(what + ": cannot allocate " + format_bytes(bytes) + ": " + std::strerror(err));
    }
    return std::shared_ptr<std::uint8_t>(static_cast<std::uint8_t*>(p),
                                         [bytes](std::uint8_t* q) { detail::unmap_zeroed(q, bytes); });
}

struct ZeroedArena::Mapping {
    std::uint8_t* p = nullptr;
    std::size_t size = 0;
    ~Mapping() { detail::unmap_zeroed(p, size); }
};

ZeroedArena::ZeroedArena(std::size_t capacity) noexcept {
    if constexpr (detail::kMapThreshold == SIZE_MAX) return;  // AddressSanitizer: see above
    if (capacity == 0 || capacity > SIZE_MAX / 2) return;
    capacity = round_up(capacity, page_size());
    void* p = detail::map_zeroed(capacity, /*huge_pages=*/true);
    if (p == nullptr) return;
    try {
        mapping_ = std::make_shared<Mapping>();
    } catch (const std::bad_alloc&) {
        detail::unmap_zeroed(p, capacity);
        return;
    }
    mapping_->p = static_cast<std::uint8_t*>(p);
    mapping_->size = capacity;
}

std::shared_ptr<std::uint8_t> ZeroedArena::take(std::size_t bytes) noexcept {
    if (!mapping_ || bytes > mapping_->size - used_) return nullptr;
    std::uint8_t* p = mapping_->p + used_;
    used_ += std::min(round_up(bytes, 64), mapping_->size - used_);
    return std::shared_ptr<std::uint8_t>(mapping_, p);  // shares the mapping's ownership
}

void ZeroedArena::finish() noexcept {
    if (!mapping_) return;
    // The tail goes from the huge page after the last one in use: unmapping part of a huge page
    // splits it into 4 KiB pages, and the bytes handed out in it then streamed at a tenth of the
    // rate of the rest (bench_decode_sweep, Zen 5 VM: the last 6.5 MB matrix 2.8-3.0 ms against
    // 0.3). A mapping too small for huge pages keeps to its 4 KiB pages.
    const std::size_t keep = round_up(used_, mapping_->size >= kHugePage ? kHugePage : page_size());
    if (keep > 0 && keep < mapping_->size) {
        detail::unmap_zeroed(mapping_->p + keep, mapping_->size - keep);
        mapping_->size = keep;
    }
    mapping_.reset();  // the pieces handed out keep the rest mapped; with none, this unmaps it
}

}  // namespace ember

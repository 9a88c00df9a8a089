// Zeroed memory taken straight from the kernel, touched only where it is used: repacked weights
// (allocate_zeroed_pages) and the forward pass's large scratch buffers (ZeroedVector).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ember {

/// `bytes` of zeroed memory, 64-byte aligned at least. Large buffers start on a 2 MiB boundary
/// and are marked for transparent huge pages where the system has them, so filling one takes a
/// page fault per 2 MiB instead of one per 4 KiB (on virtual machines, where faults are costly,
/// the faults were most of a model's load time). Throws ember::Error naming `what` when the
/// memory cannot be had.
std::shared_ptr<std::uint8_t> allocate_zeroed_pages(std::size_t bytes, const std::string& what);

/// Zeroed huge-page memory handed out in order, for the repacked weights of one model: one
/// mapping rather than one per tensor, so all of it but the last 2 MiB can be huge pages (a
/// mapping per tensor left each one's last partial 2 MiB in 4 KiB pages, each costly to fault
/// in on a virtual machine). The capacity is only reserved: pages are touched as they are used,
/// and finish() returns the unused tail. Under AddressSanitizer it hands out nothing (callers
/// fall back on allocate_zeroed_pages, which the sanitizer sees).
class ZeroedArena {
public:
    /// Reserves `capacity` bytes; best effort: when they cannot be had, take() returns null.
    explicit ZeroedArena(std::size_t capacity) noexcept;
    /// The next `bytes` (64-byte aligned), kept mapped while the returned owner or any other
    /// lives; null when they do not fit.
    std::shared_ptr<std::uint8_t> take(std::size_t bytes) noexcept;
    /// Unmaps the part never handed out from the first whole huge page on (splitting the last
    /// one in use slowed its reads); takes nothing more.
    void finish() noexcept;

private:
    struct Mapping;
    std::shared_ptr<Mapping> mapping_;
    std::size_t used_ = 0;
};

namespace detail {
/// Zeroed anonymous memory of `bytes` (nullptr when it fails, errno set), released by
/// unmap_zeroed(p, bytes). huge_pages: 2 MiB aligned and advised for transparent huge pages.
void* map_zeroed(std::size_t bytes, bool huge_pages = false);
void unmap_zeroed(void* p, std::size_t bytes) noexcept;
/// Bytes map_zeroed holds now (for memory accounting: they bypass operator new).
std::size_t mapped_zeroed_bytes() noexcept;
/// Under AddressSanitizer every block comes from operator new (then zeroed), so the sanitizer
/// still sees accesses past a buffer's end: mapped memory is invisible to it.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kMapThreshold = SIZE_MAX;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::size_t kMapThreshold = SIZE_MAX;
#else
constexpr std::size_t kMapThreshold = std::size_t{64} << 10;
#endif
#else
constexpr std::size_t kMapThreshold = std::size_t{64} << 10;
#endif
}  // namespace detail

/// An allocator of memory that is already zero: blocks of 64 KiB and more are mapped straight
/// from the kernel, so a vector that grows to n elements writes nothing and its pages cost
/// nothing until used (a decode touches one row of a buffer sized for 512-row prefills).
/// Elements must be trivial; resize() after a shrink does not zero the elements it brings back.
template <class T>
struct ZeroedAllocator {
    static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
    using value_type = T;
    ZeroedAllocator() noexcept = default;
    template <class U>
    ZeroedAllocator(const ZeroedAllocator<U>&) noexcept {}

    T* allocate(std::size_t n) {
        if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        void* p = bytes >= detail::kMapThreshold ? detail::map_zeroed(bytes) : ::operator new(bytes);
        if (p == nullptr) throw std::bad_alloc();
        if (bytes < detail::kMapThreshold) std::memset(p, 0, bytes);
        return static_cast<T*>(p);
    }
    void deallocate(T* p, std::size_t n) noexcept {
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= detail::kMapThreshold) {
            detail::unmap_zeroed(p, bytes);
        } else {
            ::operator delete(p);
        }
    }
    /// Value-initialization writes nothing: the memory is zero already.
    template <class U>
    void construct(U*) noexcept {}
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
    template <class U>
    bool operator==(const ZeroedAllocator<U>&) const noexcept { return true; }
};

template <class T>
using ZeroedVector = std::vector<T, ZeroedAllocator<T>>;

}  // namespace ember

// Replaces the global operator new/delete of a test executable and counts allocations (from
// every thread) while g_counting is set. Include it in exactly one file of an executable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace ember_test {

inline std::atomic<bool> g_counting{false};
inline std::atomic<long> g_allocations{0};
inline std::atomic<long> g_allocated_bytes{0};  ///< Bytes requested while counting.

inline void* counted_alloc(std::size_t n, std::size_t align = 0) {
    if (g_counting.load(std::memory_order_relaxed)) {
        g_allocations.fetch_add(1, std::memory_order_relaxed);
        g_allocated_bytes.fetch_add(static_cast<long>(n), std::memory_order_relaxed);
    }
    if (n == 0) n = 1;
    void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                                : std::malloc(n);
    if (!p) throw std::bad_alloc();
    return p;
}

inline void* counted_alloc_nothrow(std::size_t n) noexcept {
    try {
        return counted_alloc(n);
    } catch (...) {
        return nullptr;
    }
}

}  // namespace ember_test

// GCC 12 pairs an inlined delete with the standard operator new it assumes and reports free() on
// new's pointer (-Wmismatched-new-delete); these replacements allocate with malloc throughout.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) { return ember_test::counted_alloc(n); }
void* operator new[](std::size_t n) { return ember_test::counted_alloc(n); }
void* operator new(std::size_t n, std::align_val_t a) { return ember_test::counted_alloc(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return ember_test::counted_alloc(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return ember_test::counted_alloc_nothrow(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return ember_test::counted_alloc_nothrow(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

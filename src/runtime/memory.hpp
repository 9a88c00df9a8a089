// How much memory this process may still take, and the checks that turn an allocation that
// cannot succeed into an ember::Error saying how much it needs (instead of std::bad_alloc, the
// OOM killer, or an abort inside the OpenMP runtime).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember {

/// The system's page size in bytes (4096 when it cannot be read).
std::size_t page_size() noexcept;

/// Bytes this process can still allocate: the smallest of the memory the system has available
/// (MemAvailable on Linux, else physical memory), the room left under a cgroup memory limit and
/// under the address-space and data-size limits (ulimit -v, ulimit -d).
std::uint64_t available_memory() noexcept;

/// Throws ember::Error "WHAT needs N GiB, more than the M GiB of memory available" when `bytes`
/// exceeds available_memory().
void check_memory(std::uint64_t bytes, const std::string& what);

/// Throws ember::Error when `n` threads exceed kMaxThreads or their stacks do not fit in the
/// address space left under ulimit -v (where starting them would fail).
void check_threads(int n, const std::string& what);

/// "512 B", "1.5 KiB", "64.0 MiB", "2.00 GiB".
std::string format_bytes(std::uint64_t bytes);

/// a * b, or UINT64_MAX when it overflows (sizes computed from untrusted values).
constexpr std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) noexcept {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}
/// a + b, or UINT64_MAX when it overflows.
constexpr std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}
/// v as a size for saturating_mul/add: negative values (unchecked options) count as 0.
constexpr std::uint64_t size_or_zero(std::int64_t v) noexcept { return v > 0 ? static_cast<std::uint64_t>(v) : 0; }

}  // namespace ember

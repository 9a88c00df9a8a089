#include "runtime/memory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ember/types.hpp"
#include "runtime/fail.hpp"

namespace ember {
namespace {

constexpr std::uint64_t kUnknown = UINT64_MAX;

// MemAvailable from /proc/meminfo (kB), else the physical memory.
std::uint64_t system_available() noexcept {
    std::FILE* f = std::fopen("/proc/meminfo", "r");
    if (f != nullptr) {
        char line[256];
        unsigned long long kb = 0;
        bool found = false;
        while (!found && std::fgets(line, sizeof line, f) != nullptr) {
            found = std::sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
        }
        std::fclose(f);
        if (found) return saturating_mul(kb, 1024);
    }
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    return pages > 0 ? saturating_mul(static_cast<std::uint64_t>(pages), page_size()) : kUnknown;
}

// Reads one unsigned number (or "max") from a cgroup file.
std::uint64_t read_cgroup_value(const std::string& path) noexcept {
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return kUnknown;
    unsigned long long v = 0;
    const bool ok = std::fscanf(f, "%llu", &v) == 1;
    std::fclose(f);
    return ok ? v : kUnknown;
}

// Room left under a cgroup v2 memory limit (memory.max - memory.current).
std::uint64_t cgroup_available() noexcept {
    std::FILE* f = std::fopen("/proc/self/cgroup", "r");
    if (f == nullptr) return kUnknown;
    char line[4096];
    std::string dir;
    while (std::fgets(line, sizeof line, f) != nullptr) {
        const std::string_view l(line);
        if (l.substr(0, 3) == "0::") {
            dir = std::string(l.substr(3, l.find_last_not_of("\r\n") - 2));
            break;
        }
    }
    std::fclose(f);
    if (dir.empty() || dir.find("..") != std::string::npos) return kUnknown;
    const std::string base = "/sys/fs/cgroup" + (dir == "/" ? std::string() : dir);
    const std::uint64_t max = read_cgroup_value(base + "/memory.max");
    const std::uint64_t current = read_cgroup_value(base + "/memory.current");
    if (max == kUnknown || current == kUnknown) return kUnknown;
    return max > current ? max - current : 0;
}

// Pages of this process: [0] total virtual size, [5] data + stack (/proc/self/statm).
bool statm(std::uint64_t& vm, std::uint64_t& data) noexcept {
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return false;
    unsigned long long v[6] = {};
    const bool ok = std::fscanf(f, "%llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 6;
    std::fclose(f);
    vm = saturating_mul(v[0], page_size());
    data = saturating_mul(v[5], page_size());
    return ok;
}

std::uint64_t limit_headroom(int resource, std::uint64_t used) noexcept {
    struct rlimit rl {};
    if (::getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return kUnknown;
    const auto cur = static_cast<std::uint64_t>(rl.rlim_cur);
    return cur > used ? cur - used : 0;
}

// Room left under ulimit -v (the one that counts thread stacks).
std::uint64_t address_space_headroom() noexcept {
    std::uint64_t vm = 0, data = 0;
    if (!statm(vm, data)) vm = 0;
    return limit_headroom(RLIMIT_AS, vm);
}

// Stack size of the threads ember's pool starts: the pthread default (set from ulimit -s at
// process start).
std::uint64_t thread_stack_bytes() noexcept {
    std::size_t size = 0;
    pthread_attr_t attr;
    if (::pthread_getattr_default_np(&attr) == 0) {
        ::pthread_attr_getstacksize(&attr, &size);
        ::pthread_attr_destroy(&attr);
    }
    return size > 0 ? size : std::uint64_t{8} << 20;
}

}  // namespace

std::size_t page_size() noexcept {
    static const std::size_t page = [] {
        const long p = ::sysconf(_SC_PAGESIZE);
        return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
    }();
    return page;
}

std::uint64_t available_memory() noexcept {
    std::uint64_t vm = 0, data = 0;
    const bool have_statm = statm(vm, data);
    std::uint64_t avail = std::min(system_available(), cgroup_available());
    avail = std::min(avail, limit_headroom(RLIMIT_AS, have_statm ? vm : 0));
    avail = std::min(avail, limit_headroom(RLIMIT_DATA, have_statm ? data : 0));
    return avail;
}

void check_memory(std::uint64_t bytes, const std::string& what) {
    const std::uint64_t avail = available_memory();
    if (bytes > avail) {
        fail(what + " needs " + format_bytes(bytes) + ", more than the " + format_bytes(avail) +
             " of memory available");
    }
}

void check_threads(int n, const std::string& what) {
    if (n < 0 || n > kMaxThreads) {
        fail(what + ": " + std::to_string(n) + " threads is out of range [0, " + std::to_string(kMaxThreads) + "]");
    }
    const std::uint64_t stacks = saturating_mul(static_cast<std::uint64_t>(n), thread_stack_bytes());
    const std::uint64_t room = address_space_headroom();
    if (n > 1 && stacks > room) {
        fail(what + ": " + std::to_string(n) + " threads need " + format_bytes(stacks) +
             " of stack address space, more than the " + format_bytes(room) + " left under the address-space limit");
    }
}

std::string format_bytes(std::uint64_t bytes) {
    char b[48];
    const double v = static_cast<double>(bytes);
    if (bytes < 1024) std::snprintf(b, sizeof b, "%llu B", static_cast<unsigned long long>(bytes));
    else if (bytes < (std::uint64_t{1} << 20)) std::snprintf(b, sizeof b, "%.1f KiB", v / 1024);
    else if (bytes < (std::uint64_t{1} << 30)) std::snprintf(b, sizeof b, "%.1f MiB", v / (1 << 20));
    else std::snprintf(b, sizeof b, "%.2f GiB", v / (1 << 30));
    return b;
}

}  // namespace ember

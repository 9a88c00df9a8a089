#include "gguf/mapped_file.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/fail.hpp"
#include "runtime/memory.hpp"
#include "runtime/parallel.hpp"

namespace ember::gguf {
namespace {

// Closes a descriptor on every exit path of open() unless released.
struct FdGuard {
    int fd;
    ~FdGuard() {
        if (fd >= 0) ::close(fd);
    }
    int release() { return std::exchange(fd, -1); }
};

std::string errno_text(int err) { return std::strerror(err); }

// Reads bytes [begin, end) of fd to base + begin on all threads, in 16 MiB slices. Returns 0 or an
// errno value (EIO for a file that ended early).
int read_range(int fd, std::uint8_t* base, std::size_t begin, std::size_t end) {
    constexpr std::size_t kSlice = std::size_t{16} << 20;
    const auto n_slices = static_cast<std::int64_t>((end - begin + kSlice - 1) / kSlice);
    std::atomic<int> error{0};
    parallel_for(n_slices, hardware_threads(), 1, [&](std::int64_t s0, std::int64_t s1, int) {
        for (std::int64_t s = s0; s < s1 && error.load(std::memory_order_relaxed) == 0; ++s) {
            std::size_t off = begin + static_cast<std::size_t>(s) * kSlice;
            const std::size_t stop = std::min(end, off + kSlice);
            while (off < stop) {
                const ssize_t got = ::pread(fd, base + off, stop - off, static_cast<off_t>(off));
                if (got < 0 && errno == EINTR) continue;
                if (got <= 0) {
                    error.store(got < 0 ? errno : EIO, std::memory_order_relaxed);
                    return;
                }
                off += static_cast<std::size_t>(got);
            }
        }
    });
    return error.load();
}

// Maps fd's `size` bytes read-only at a 2 MiB-aligned address (so that memory later put in place
// of the mapping can take huge pages). Returns nullptr with errno set on failure.
std::uint8_t* map_file_aligned(int fd, std::size_t size) {
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    const std::size_t length = (size + page_size() - 1) / page_size() * page_size();
    if (length > SIZE_MAX - kHuge) {
        errno = ENOMEM;
        return nullptr;
    }
    void* raw = ::mmap(nullptr, length + kHuge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    auto* base = static_cast<std::uint8_t*>(raw);
    auto* start = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(base) + kHuge - 1) / kHuge * kHuge);
    if (::mmap(start, length, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
        const int err = errno;
        ::munmap(raw, length + kHuge);
        errno = err;
        return nullptr;
    }
#ifdef MADV_HUGEPAGE
    // Advice only. A cold file read through this 2 MiB-aligned mapping comes into the page cache
    // in large folios mapped by 2 MiB entries (Linux 6.18, ext4: 2.01 of a 2.05 GiB F16 file;
    // 2.05 with the advice). A file already cached in small folios (just written) keeps them.
    ::madvise(start, length, MADV_HUGEPAGE);
#endif
    // Give back the reservation around it: the head up to the boundary (when any) and the tail,
    // never empty (start < base + kHuge).
    if (start > base) ::munmap(base, static_cast<std::size_t>(start - base));
    ::munmap(start + length, static_cast<std::size_t>(base + kHuge - start));
    return start;
}

}  // namespace

MappedFile MappedFile::open(const std::string& path, bool use_mmap) {
    if (path.find('\0') != std::string::npos) fail(path + ": file name contains a NUL byte");
    int fd = -1;
    do {  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below)
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) fail(path + ": cannot open: " + errno_text(errno));
    FdGuard guard{fd};

    struct stat st {};
    if (::fstat(fd, &st) != 0) fail(path + ": cannot stat: " + errno_text(errno));
    if (S_ISDIR(st.st_mode)) fail(path + ": is a directory, not a GGUF file");
    if (!S_ISREG(st.st_mode)) fail(path + ": is a device, FIFO or socket, not a regular file");
    if (st.st_size <= 0) fail(path + ": file is empty (0 bytes)");

    const auto size = static_cast<std::size_t>(st.st_size);
    MappedFile f;
    f.path_ = path;
    f.size_ = size;
    std::uint8_t* p = map_file_aligned(fd, size);
    if (p == nullptr) fail(path + ": cannot map " + std::to_string(size) + " bytes: " + errno_text(errno));
    f.data_ = p;
    f.fd_ = guard.release();
    f.read_pending_ = !use_mmap;
    return f;
}

void MappedFile::read_into_memory() {
    if (!read_pending_) return;
    read_pending_ = false;
    // The pages not released, in order: [at, begin) before each released range, then the tail.
    std::sort(released_.begin(), released_.end());
    std::vector<std::pair<std::size_t, std::size_t>> keep;
    std::size_t at = 0;
    for (const auto& [b, e] : released_) {
        if (b > at) keep.emplace_back(at, b);
        at = std::max(at, e);
    }
    if (at < size_) keep.emplace_back(at, size_);
    const std::size_t page = page_size();
    auto* base = const_cast<std::uint8_t*>(data_);
    for (const auto& [b, e] : keep) {
        const std::size_t length = (e - b + page - 1) / page * page;
        // Fresh memory in place of the mapped pages (2 MiB pages where the range allows), filled
        // from the file, then made read-only like the mapping it replaces.
        if (::mmap(base + b, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
            fail(path_ + ": cannot allocate " + std::to_string(length) + " bytes to read the file into: " + errno_text(errno));
        }
        ::madvise(base + b, length, MADV_HUGEPAGE);  // advice only
        if (const int err = read_range(fd_, base, b, e); err != 0) {
            fail(path_ + ": cannot read " + std::to_string(e - b) + " bytes at offset " + std::to_string(b) + ": " +
                 (err == EIO ? std::string("input/output error or file shorter than its size") : errno_text(err)));
        }
        ::mprotect(base + b, length, PROT_READ);
    }
    in_memory_ = true;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      fd_(std::exchange(other.fd_, -1)), in_memory_(std::exchange(other.in_memory_, false)),
      read_pending_(std::exchange(other.read_pending_, false)),
      locked_(std::exchange(other.locked_, false)),
      path_(std::move(other.path_)), released_(std::move(other.released_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        close();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
        fd_ = std::exchange(other.fd_, -1);
        in_memory_ = std::exchange(other.in_memory_, false);
        read_pending_ = std::exchange(other.read_pending_, false);
        locked_ = std::exchange(other.locked_, false);
        path_ = std::move(other.path_);
        released_ = std::move(other.released_);
    }
    return *this;
}

MappedFile::~MappedFile() { close(); }

void MappedFile::close() noexcept {
    if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);  // the mapping and what replaced parts of it
    if (fd_ >= 0) ::close(fd_);
    data_ = nullptr;
    size_ = 0;
    fd_ = -1;
    in_memory_ = false;
    read_pending_ = false;
    locked_ = false;
    released_.clear();
}

void MappedFile::release(std::span<const std::uint8_t> range) noexcept {
    if (data_ == nullptr || locked_ || range.empty() || range.data() < data_ ||
        range.data() + range.size() > data_ + size_) {
        return;
    }
    const std::size_t page = page_size();
    const auto first = static_cast<std::size_t>(range.data() - data_);
    const std::size_t begin = (first + page - 1) / page * page;
    const std::size_t end = (first + range.size()) / page * page;
    if (begin >= end) return;
    auto* p = const_cast<std::uint8_t*>(data_ + begin);
    if (!in_memory_) {
        // A private read-only file mapping: dropping the pages loses nothing.
        if (::madvise(p, end - begin, MADV_DONTNEED) != 0) return;
    } else {
        // Read into memory: map the same bytes of the file over the copy, which frees it.
        void* q = ::mmap(p, end - begin, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd_, static_cast<off_t>(begin));
        if (q == MAP_FAILED) return;
    }
    released_.emplace_back(begin, end);
}

void MappedFile::copy(std::span<const std::uint8_t> range, std::uint8_t* dst) const noexcept {
    if (range.empty()) return;
    const bool inside = data_ != nullptr && range.data() >= data_ && range.data() + range.size() <= data_ + size_;
    if (inside && !in_memory_ && fd_ >= 0) {
        auto off = static_cast<std::size_t>(range.data() - data_);
        std::size_t done = 0;
        while (done < range.size()) {
            const ssize_t got = ::pread(fd_, dst + done, range.size() - done, static_cast<off_t>(off + done));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;  // the mapping still holds the bytes: copy the rest from it
            done += static_cast<std::size_t>(got);
        }
        if (done == range.size()) return;
        std::memcpy(dst + done, range.data() + done, range.size() - done);
        return;
    }
    std::memcpy(dst, range.data(), range.size());
}

void MappedFile::lock() {
    if (data_ == nullptr || locked_) return;
    std::sort(released_.begin(), released_.end());
    std::size_t at = 0;
    const auto lock_range = [&](std::size_t begin, std::size_t end) {
        if (begin >= end || ::mlock(data_ + begin, end - begin) == 0) return;
        const int err = errno;
        struct rlimit lim {};
        ::getrlimit(RLIMIT_MEMLOCK, &lim);
        const std::string limit = lim.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(lim.rlim_cur) + " bytes";
        ::munlock(data_, size_);
        fail(path_ + ": cannot lock " + std::to_string(end - begin) + " bytes in memory (mlock: " + errno_text(err) +
             "; RLIMIT_MEMLOCK is " + limit + ", raise it with 'ulimit -l' or run without mlock)");
    };
    for (const auto& [b, e] : released_) {
        lock_range(at, std::max(at, b));
        at = std::max(at, e);
    }
    lock_range(at, size_);
    locked_ = true;
}

}  // namespace ember::gguf

#include "gguf/mapped_file.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/fail.hpp"

namespace ember::gguf {
namespace {

// Closes a descriptor on every exit path of open().
struct FdGuard {
    int fd;
    ~FdGuard() {
        if (fd >= 0) ::close(fd);
    }
};

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

MappedFile MappedFile::open(const std::string& path) {
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
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) fail(path + ": cannot map " + std::to_string(size) + " bytes: " + errno_text(errno));
    return MappedFile(static_cast<const std::uint8_t*>(p), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
    if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

}  // namespace ember::gguf

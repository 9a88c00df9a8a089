#include "runtime/file_io.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "runtime/fail.hpp"
#include "runtime/memory.hpp"

namespace ember {
namespace {

const char* kind_of(mode_t mode) noexcept {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

std::string errno_text() { return std::strerror(errno); }

void check_name(const std::string& path) {
    if (path.empty()) fail("empty file name");
    if (path.find('\0') != std::string::npos) fail(path + ": file name contains a NUL byte");
}

std::string folder_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

std::vector<std::uint8_t> read_regular_file(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
    check_name(path);
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (f.fd < 0) fail(path + ": cannot open the " + std::string(what) + ": " + errno_text());
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) fail(path + ": cannot read the " + std::string(what) + ": " + errno_text());
    if (!S_ISREG(st.st_mode)) fail(path + ": is " + kind_of(st.st_mode) + ", not a " + std::string(what) + " file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > max_bytes) {
        fail(path + ": " + format_bytes(size) + " is more than a " + std::string(what) + " can be here (" +
             format_bytes(max_bytes) + ")");
    }
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::read(f.fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail(path + ": cannot read the " + std::string(what) + ": " + errno_text());
        if (n == 0) fail(path + ": the " + std::string(what) + " shrank while being read");
        done += static_cast<std::size_t>(n);
    }
    return bytes;
}

void check_output_target(const std::string& path) {
    check_name(path);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return;  // a new file (or a dangling symlink, replaced)
        fail(path + ": cannot check the output file: " + errno_text());
    }
    if (!S_ISREG(st.st_mode)) fail(path + ": is " + kind_of(st.st_mode) + "; only a regular file is replaced");
}

std::uint64_t free_disk_bytes(const std::string& path) {
    struct statvfs fs {};
    if (::statvfs(folder_of(path).c_str(), &fs) != 0) return UINT64_MAX;
    return saturating_mul(static_cast<std::uint64_t>(fs.f_bavail), static_cast<std::uint64_t>(fs.f_frsize));
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
    check_output_target(path_);
    static std::atomic<unsigned> counter{0};
    for (int attempt = 0; attempt < 100 && file_ == nullptr; ++attempt) {
        tmp_ = path_ + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST) continue;
        if (fd < 0) fail(path_ + ": cannot create a file in " + folder_of(path_) + ": " + errno_text());
        file_ = ::fdopen(fd, "wb");
        if (file_ == nullptr) {
            ::close(fd);
            ::unlink(tmp_.c_str());
            fail(path_ + ": cannot write: " + errno_text());
        }
    }
    if (file_ == nullptr) fail(path_ + ": cannot create a temporary file next to it");
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() noexcept {
    if (file_ != nullptr) {
        std::fclose(file_);
        file_ = nullptr;
        ::unlink(tmp_.c_str());
    }
}

void OutputFile::write(const void* data, std::size_t n) {
    if (file_ == nullptr) fail(path_ + ": write after commit");
    if (n == 0) return;
    if (std::fwrite(data, 1, n, file_) != n) {
        const std::string why = errno_text();
        discard();
        fail(path_ + ": write failed at byte " + std::to_string(written_) + ": " + why);
    }
    written_ += n;
}

void OutputFile::commit() {
    if (file_ == nullptr) fail(path_ + ": committed twice");
    const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
    const std::string why = flushed ? std::string() : errno_text();
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!flushed || !closed) {
        ::unlink(tmp_.c_str());
        fail(path_ + ": write failed while closing: " + (flushed ? errno_text() : why));
    }
    try {
        check_output_target(path_);  // it may have changed while we wrote
    } catch (...) {
        ::unlink(tmp_.c_str());
        throw;
    }
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const std::string err = errno_text();
        ::unlink(tmp_.c_str());
        fail(path_ + ": cannot replace it: " + err);
    }
}

}  // namespace ember

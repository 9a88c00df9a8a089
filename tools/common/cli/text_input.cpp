#include "cli/text_input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/report.hpp"
#include "ember/error.hpp"

namespace ember::cli {
namespace {

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

[[noreturn]] void input_error(const std::string& name, std::string_view what, const std::string& problem) {
    throw Error(name + ": the " + std::string(what) + " " + problem);
}

// Reads up to limit + 1 bytes (one more tells that the input is over the limit).
std::string read_bounded(int fd, std::uint64_t limit, const std::string& name, std::string_view what) {
    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) input_error(name, what, std::string("cannot be read: ") + std::strerror(errno));
        if (n == 0) return text;
        const auto room = limit + 1 - text.size();
        text.append(buf, static_cast<std::size_t>(std::min<std::uint64_t>(room, static_cast<std::uint64_t>(n))));
        if (text.size() > limit) input_error(name, what, "is longer than the limit of " + format_bytes(limit));
    }
}

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

std::string read_text_input(const std::string& path, std::uint64_t limit, std::string_view what) {
    if (path == "-") return read_bounded(STDIN_FILENO, limit, "stdin", what);
    if (path.empty()) throw Error(std::string("empty file name for the ") + std::string(what));
    if (path.find('\0') != std::string::npos) input_error(path, what, "name contains a NUL byte");
    // O_NONBLOCK: opening a FIFO without a writer must not wait; it is refused below anyway.
    Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
    if (f.fd < 0) input_error(path, what, std::string("cannot be opened: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) input_error(path, what, std::string("cannot be read: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) input_error(path, what, std::string("is ") + kind_of(st.st_mode) + ", not a regular file");
    if (static_cast<std::uint64_t>(st.st_size) > limit) {
        input_error(path, what, "has " + format_bytes(static_cast<std::uint64_t>(st.st_size)) +
                                    ", more than the limit of " + format_bytes(limit));
    }
    // Back to blocking reads (a regular file never blocks, but be explicit).
    ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
    return read_bounded(f.fd, limit, path, what);
}

bool LineReader::fill() {
    if (eof_) return false;
    if (pos_ > 0) {
        buffer_.erase(0, pos_);
        pos_ = 0;
    }
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            eof_ = true;
            return false;
        }
        buffer_.append(buf, static_cast<std::size_t>(n));
        return true;
    }
}

LineReader::Status LineReader::next(std::string& line) {
    std::uint64_t skipped = 0;
    bool too_long = false;
    for (;;) {
        const std::size_t nl = buffer_.find('\n', pos_);
        if (nl != std::string::npos) {
            if (too_long || nl - pos_ > max_line_) {
                pos_ = nl + 1;
                return Status::too_long;
            }
            line.assign(buffer_, pos_, nl - pos_);
            pos_ = nl + 1;
            if (!line.empty() && line.back() == '\r') line.pop_back();
            return Status::line;
        }
        if (buffer_.size() - pos_ > max_line_) {  // no line end yet: drop what is held
            too_long = true;
            skipped += buffer_.size() - pos_;
            pos_ = buffer_.size();
            if (skipped > max_skip_) return Status::not_text;
        }
        if (!fill()) {
            if (too_long) {
                pos_ = buffer_.size();
                return Status::too_long;
            }
            if (pos_ == buffer_.size()) return Status::end;
            line.assign(buffer_, pos_, std::string::npos);
            pos_ = buffer_.size();
            if (!line.empty() && line.back() == '\r') line.pop_back();
            return Status::line;
        }
    }
}

}  // namespace ember::cli

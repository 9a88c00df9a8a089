// Files ember reads whole (session states) and writes (GGUF files, session states): a regular
// file below a size limit in, a temporary file renamed over a regular file out. A directory,
// device, FIFO or socket is refused on both sides with an ember::Error naming the file, so
// nothing is read without bound and nothing but a regular file is ever replaced.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

/// Reads the whole regular file `path` of at most `max_bytes`. `what` names it in errors
/// ("session state"). Throws ember::Error naming the file otherwise.
std::vector<std::uint8_t> read_regular_file(const std::string& path, std::uint64_t max_bytes, std::string_view what);

/// Throws ember::Error unless `path` is absent or a regular file (or a symlink to one), e.g.
/// "out.gguf: is a character device; only a regular file is replaced".
void check_output_target(const std::string& path);

/// Bytes free for this user on the file system that holds `path`'s folder (UINT64_MAX when
/// unknown).
std::uint64_t free_disk_bytes(const std::string& path);

/// A file written in one piece: bytes go to a new temporary file in the target's folder, and
/// commit() renames it over `path`. The target is checked (check_output_target) when the
/// OutputFile is created and again just before the rename. Without commit() (an error, an
/// exception) the temporary file is removed and `path` is untouched.
class OutputFile {
public:
    explicit OutputFile(std::string path);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    void write(const void* data, std::size_t n);
    /// Flushes, syncs and renames the temporary file over the target.
    void commit();
    std::uint64_t bytes_written() const noexcept { return written_; }
    const std::string& path() const noexcept { return path_; }

private:
    void discard() noexcept;

    std::string path_, tmp_;
    std::FILE* file_ = nullptr;
    std::uint64_t written_ = 0;
};

}  // namespace ember

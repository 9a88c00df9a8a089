// Text inputs of the ember tools and ember-chat (prompts, templates, JSON files, REPL lines):
// a regular file, or stdin for "-", never more than a limit. A directory, a device such as
// /dev/zero, a FIFO or a socket is refused before anything is read, and every error names the
// file, e.g. "DIR: the prompt file is a directory, not a regular file" or
// "big.txt: the prompt file has 80.0 MiB, more than the limit of 64.0 MiB".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ember::cli {

// Limits (bytes) of the tools' text inputs.
inline constexpr std::uint64_t kPromptLimit = std::uint64_t{64} << 20;      ///< prompts, texts to tokenize
inline constexpr std::uint64_t kCorpusLimit = std::uint64_t{512} << 20;     ///< ember-perplexity's text
inline constexpr std::uint64_t kTemplateLimit = std::uint64_t{1} << 20;     ///< chat templates, grammars
inline constexpr std::uint64_t kJsonLimit = std::uint64_t{64} << 20;        ///< JSON inputs
inline constexpr std::size_t kReplLineLimit = std::size_t{1} << 20;         ///< one line typed into a REPL

/// Reads a text input: the regular file `path` of at most `limit` bytes, or stdin (up to
/// `limit` bytes) when `path` is "-". `what` names the input in errors ("prompt file").
/// Throws ember::Error naming the file: missing or unreadable, not a regular file, over the
/// limit, or a file name with a NUL byte.
std::string read_text_input(const std::string& path, std::uint64_t limit, std::string_view what);

/// Reads lines from a file descriptor (e.g. stdin for a REPL), each at most `max_line` bytes,
/// with memory bounded by that limit whatever arrives. A longer line is skipped to its end and
/// reported as too_long; when no line end comes within `max_skip` bytes the input is not text
/// (e.g. /dev/zero) and next() returns not_text.
class LineReader {
public:
    enum class Status { line, too_long, end, not_text };

    explicit LineReader(int fd, std::size_t max_line = kReplLineLimit,
                        std::uint64_t max_skip = std::uint64_t{64} << 20)
        : fd_(fd), max_line_(max_line), max_skip_(max_skip) {}

    /// The next line without its "\n" or "\r\n"; the last line may lack a line end.
    Status next(std::string& line);

private:
    bool fill();  // reads more bytes into buffer_; false at end of input

    int fd_;
    std::size_t max_line_;
    std::uint64_t max_skip_;
    std::string buffer_;
    std::size_t pos_ = 0;
    bool eof_ = false;
};

}  // namespace ember::cli

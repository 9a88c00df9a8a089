// A read-only memory mapping of a whole file (RAII). Empty files, directories and other
// non-regular files are rejected with an ember::Error naming the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace ember::gguf {

class MappedFile {
public:
    /// Maps `path` read-only. Throws ember::Error when it cannot be opened, is not a regular
    /// file, is empty, or cannot be mapped.
    static MappedFile open(const std::string& path);

    MappedFile() noexcept = default;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    const std::uint8_t* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }

private:
    MappedFile(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}
    void release() noexcept;

    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace ember::gguf

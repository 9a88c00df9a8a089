// A whole file in memory, read-only (RAII): memory-mapped (the default) or read into anonymous
// memory. Empty files, directories and other non-regular files are rejected with an
// ember::Error naming the path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ember::gguf {

class MappedFile {
public:
    /// Maps `path` read-only. With `use_mmap` false the bytes are to be read into memory of the
    /// process's own: read_into_memory() does it, once the ranges not needed were released.
    /// Throws ember::Error when it cannot be opened, is not a regular file, is empty, or cannot
    /// be mapped.
    static MappedFile open(const std::string& path, bool use_mmap = true);

    MappedFile() noexcept = default;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    const std::uint8_t* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }

    /// Drops the whole pages inside `range` (part of bytes()) from this process's memory; the
    /// bytes stay readable, read again from the file if ever touched. For data copied elsewhere
    /// (repacked weights). Best effort: a failure leaves the pages resident.
    void release(std::span<const std::uint8_t> range) noexcept;

    /// Copies `range` (part of bytes()) to dst. Bytes mapped from the file are read with pread,
    /// which costs no page faults or page-table walks for the mapping (on a virtual machine,
    /// reading 600 MB through 4 KiB mapped pages took 3-4x longer); others are copied.
    void copy(std::span<const std::uint8_t> range, std::uint8_t* dst) const noexcept;

    /// Opened with `use_mmap` false: replaces the mapped pages not released so far by memory of
    /// its own (2 MiB pages where possible) holding the same bytes, read on all threads: those
    /// no longer change with the file. Does nothing otherwise or when called again. Must not run
    /// while other threads read bytes(). Throws ember::Error naming the path when memory cannot
    /// be had or the file cannot be read.
    void read_into_memory();

    /// Locks the pages that were not released into RAM (mlock). Throws ember::Error naming the
    /// path and the RLIMIT_MEMLOCK limit when the system refuses.
    void lock();

private:
    void close() noexcept;

    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
    int fd_ = -1;             // kept open: copy() reads through it, release() maps pages back from it
    bool in_memory_ = false;     // read_into_memory() ran: the bytes kept are anonymous memory
    bool read_pending_ = false;  // opened with use_mmap false, read_into_memory() not yet run
    bool locked_ = false;
    std::string path_;
    std::vector<std::pair<std::size_t, std::size_t>> released_;  // page-aligned [begin, end) offsets
};

}  // namespace ember::gguf

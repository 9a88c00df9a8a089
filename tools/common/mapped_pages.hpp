// How this process maps a file: how much of it is resident, and how much of that through 2 MiB
// entries (Linux's /proc/self/smaps). Float weights are read in place from the model file's
// mapping, and a file cached in 4 KiB folios (as it was written) decodes them ~1.5x slower than
// one read cold into 2 MiB folios (docs/memory.md); ember-bench says which it measured.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>

namespace ember::tools {

struct MappedPages {
    std::uint64_t resident_bytes = 0;  ///< Rss of every mapping of the file
    std::uint64_t huge_bytes = 0;      ///< FilePmdMapped: the part mapped by 2 MiB entries
};

/// Sums the smaps entries (text as in /proc/PID/smaps) whose path is `path` exactly.
MappedPages parse_mapped_pages(std::istream& smaps, const std::string& path);

/// This process's mappings of the file at `path` (compared by canonical path); nullopt where
/// /proc/self/smaps cannot be read (not Linux) or the path does not resolve.
std::optional<MappedPages> mapped_file_pages(const std::string& path);

}  // namespace ember::tools

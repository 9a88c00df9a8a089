// GPT-2's reversible byte <-> unicode mapping used by byte-level BPE vocabularies: printable
// Latin-1 bytes map to themselves, the other bytes to U+0100 onwards (space -> 'Ġ', '\n' -> 'Ċ').
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace ember::tokenizer {

/// UTF-8 text of the code point byte `b` maps to.
const std::array<std::string, 256>& byte_to_unicode();

/// Appends the bytes `text` (byte-level characters) stands for. Characters outside the mapping
/// are copied as they are. Returns false if any such character was found.
bool unicode_to_bytes(std::string_view text, std::string& out);

}  // namespace ember::tokenizer

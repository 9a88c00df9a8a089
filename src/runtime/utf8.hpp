// Small UTF-8 helpers (tokenizers, JSON, chat templates).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ember {

/// Appends the UTF-8 encoding of code point `cp` (must be <= 0x10FFFF).
void append_utf8(std::string& out, char32_t cp);

/// Length of the UTF-8 sequence a lead byte starts (1 for invalid lead bytes).
inline std::size_t utf8_sequence_length(unsigned char lead) noexcept {
    if (lead < 0xC0) return 1;
    if (lead < 0xE0) return 2;
    if (lead < 0xF0) return 3;
    if (lead < 0xF8) return 4;
    return 1;
}

/// Copies the complete part of `in` to `out`, replacing invalid sequences by U+FFFD (one per
/// maximal invalid subpart, as Unicode recommends). Returns the bytes consumed: a trailing
/// sequence that is incomplete but could still become valid is left unconsumed unless `final`,
/// in which case it becomes U+FFFD too.
std::size_t sanitize_utf8(std::string_view in, bool final, std::string& out);

/// True when `s` is entirely valid UTF-8.
bool is_valid_utf8(std::string_view s) noexcept;

/// Length of the well-formed UTF-8 sequence starting at s[i] (1 to 4), or 0 when the bytes
/// there are not one (an invalid lead byte, a bad continuation, or a truncated sequence).
std::size_t utf8_valid_length(std::string_view s, std::size_t i) noexcept;

}  // namespace ember

// ember/text.hpp: showing untrusted text safely.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ember {

/// `text` made safe to print on a terminal, in a log line or inside a JSON string: printable
/// ASCII and well-formed UTF-8 stay as they are; control characters (NUL, newline, tab, ESC, the
/// C1 range U+0080..U+009F), bidirectional-override characters and bytes that are not UTF-8
/// become `\xNN` for each byte (ESC is `\x1b`). The result is one line of printable UTF-8 of at
/// most `max_bytes` bytes (longer text is cut at a character boundary and ends with "...").
/// Every ember::Error message has gone through it, so model metadata or token text quoted in an
/// error can never move the cursor, recolour the terminal or cut the message short.
std::string printable(std::string_view text, std::size_t max_bytes = 4096);

/// `text` as the inside of a JSON string (RFC 8259), e.g. for model output in a JSON line:
/// quotes and backslashes escaped, control characters as \n, \t, \r or \u00XX (the C1 range
/// too), other well-formed UTF-8 unchanged. Bytes that are not UTF-8 cannot be carried by JSON;
/// each becomes the visible text \xNN (an escaped backslash), so the result is always valid.
std::string json_escape(std::string_view text);

}  // namespace ember

#include "ember/text.hpp"

#include <algorithm>

#include "runtime/utf8.hpp"

namespace ember {
namespace {

// Code points shown escaped although they are well-formed: C1 controls, and the bidirectional
// embeddings, overrides and isolates that reorder what a terminal shows.
bool hidden(char32_t cp) noexcept {
    return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
           cp == 0x2028 || cp == 0x2029;
}

char32_t decode(std::string_view s, std::size_t i, std::size_t len) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data() + i);
    if (len == 1) return p[0];
    char32_t cp = p[0] & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[k] & 0x3F);
    return cp;
}

void append_escaped(std::string& out, unsigned char b) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 15];
}

}  // namespace

std::string printable(std::string_view text, std::size_t max_bytes) {
    constexpr std::string_view kEllipsis = "...";
    std::string out;
    out.reserve(std::min(text.size(), max_bytes) + 8);
    std::size_t fit = 0;  // length at the last character boundary that leaves room for "..."
    for (std::size_t i = 0; i < text.size();) {
        std::size_t len = utf8_valid_length(text, i);
        const auto byte = static_cast<unsigned char>(text[i]);
        if (len == 1 && byte >= 0x20 && byte < 0x7F) {
            out += text[i];
        } else if (len > 1 && !hidden(decode(text, i, len))) {
            out.append(text.substr(i, len));
        } else {
            if (len == 0) len = 1;  // not UTF-8: escape this byte, resynchronise on the next
            for (std::size_t k = 0; k < len; ++k) append_escaped(out, static_cast<unsigned char>(text[i + k]));
        }
        i += len;
        if (out.size() + kEllipsis.size() <= max_bytes) fit = out.size();
        if (out.size() > max_bytes) {
            out.resize(fit);
            out += kEllipsis;
            return out;
        }
    }
    return out;
}

std::string json_escape(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size() + 8);
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t len = utf8_valid_length(text, i);
        if (len == 0) {  // not UTF-8: shown as the text \xNN (JSON has no way to carry the byte)
            out += "\\\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
            ++i;
            continue;
        }
        const char32_t cp = decode(text, i, len);
        if (cp == '"' || cp == '\\') {
            out += '\\';
            out += static_cast<char>(cp);
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\r') {
            out += "\\r";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) {
            out += "\\u00";
            out += kHex[cp >> 4];
            out += kHex[cp & 15];
        } else {
            out.append(text.substr(i, len));
        }
        i += len;
    }
    return out;
}

}  // namespace ember

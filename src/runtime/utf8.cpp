#include "runtime/utf8.hpp"

namespace ember {

void append_utf8(std::string& out, char32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Valid range of the second byte after `lead` (Unicode table 3-7); the others are 80..BF.
struct Second {
    unsigned char lo, hi;
};
inline Second second_range(unsigned char lead) noexcept {
    switch (lead) {
        case 0xE0: return {0xA0, 0xBF};
        case 0xED: return {0x80, 0x9F};
        case 0xF0: return {0x90, 0xBF};
        case 0xF4: return {0x80, 0x8F};
        default: return {0x80, 0xBF};
    }
}

}  // namespace

std::size_t sanitize_utf8(std::string_view in, bool final, std::string& out) {
    const auto* s = reinterpret_cast<const unsigned char*>(in.data());
    const std::size_t n = in.size();
    std::size_t i = 0;
    while (i < n) {
        const unsigned char lead = s[i];
        if (lead < 0x80) {
            out += static_cast<char>(lead);
            ++i;
            continue;
        }
        std::size_t len = 0;
        if (lead >= 0xC2 && lead <= 0xDF) len = 2;
        else if (lead >= 0xE0 && lead <= 0xEF) len = 3;
        else if (lead >= 0xF0 && lead <= 0xF4) len = 4;
        if (len == 0) {  // 80..C1 or F5..FF can never start a sequence
            out += kReplacement;
            ++i;
            continue;
        }
        std::size_t k = 1;
        bool bad = false;
        for (; k < len; ++k) {
            if (i + k >= n) break;
            const unsigned char c = s[i + k];
            const Second r = k == 1 ? second_range(lead) : Second{0x80, 0xBF};
            if (c < r.lo || c > r.hi) {
                bad = true;
                break;
            }
        }
        if (bad) {  // the maximal subpart s[i, i+k) becomes one replacement character
            out += kReplacement;
            i += k;
            continue;
        }
        if (k < len) {  // ran out of bytes: still possibly valid
            if (!final) return i;
            out += kReplacement;
            return n;
        }
        out.append(in.substr(i, len));
        i += len;
    }
    return n;
}

std::size_t utf8_valid_length(std::string_view s, std::size_t i) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const unsigned char lead = p[i];
    if (lead < 0x80) return 1;
    std::size_t len = 0;
    if (lead >= 0xC2 && lead <= 0xDF) len = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) len = 3;
    else if (lead >= 0xF0 && lead <= 0xF4) len = 4;
    if (len == 0 || len > s.size() - i) return 0;
    const Second r = second_range(lead);
    if (p[i + 1] < r.lo || p[i + 1] > r.hi) return 0;
    for (std::size_t k = 2; k < len; ++k) {
        if (p[i + k] < 0x80 || p[i + k] > 0xBF) return 0;
    }
    return len;
}

bool is_valid_utf8(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t len = utf8_valid_length(s, i);
        if (len == 0) return false;
        i += len;
    }
    return true;
}

}  // namespace ember

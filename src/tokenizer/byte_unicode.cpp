#include "tokenizer/byte_unicode.hpp"

#include <algorithm>

#include "runtime/utf8.hpp"

namespace ember::tokenizer {

namespace {

struct Tables {
    std::array<std::string, 256> to_unicode;
    std::array<short, 512> to_byte;  // code point (< 512) -> byte, -1 when unmapped
    Tables() {
        to_byte.fill(-1);
        std::array<int, 256> cp{};
        auto direct = [](int b) {
            return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        };
        int next = 256;
        for (int b = 0; b < 256; ++b) cp[b] = direct(b) ? b : next++;
        for (int b = 0; b < 256; ++b) {
            append_utf8(to_unicode[b], static_cast<char32_t>(cp[b]));
            to_byte[cp[b]] = static_cast<short>(b);
        }
    }
};

const Tables& tables() {
    static const Tables t;
    return t;
}

}  // namespace

const std::array<std::string, 256>& byte_to_unicode() { return tables().to_unicode; }

bool unicode_to_bytes(std::string_view text, std::string& out) {
    const Tables& t = tables();
    bool ok = true;
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    for (std::size_t i = 0; i < n;) {
        const unsigned char c = s[i];
        char32_t cp = 0;
        std::size_t len = 1;
        if (c < 0x80) {
            cp = c;
        } else if (c >= 0xC0 && c < 0xE0 && i + 1 < n) {
            cp = ((c & 0x1F) << 6) | (s[i + 1] & 0x3F);
            len = 2;
        } else {
            len = std::min(utf8_sequence_length(c), n - i);
            cp = 0xFFFFFFFF;
        }
        if (cp < t.to_byte.size() && t.to_byte[cp] >= 0) {
            out += static_cast<char>(t.to_byte[cp]);
        } else {
            out.append(text.substr(i, len));
            ok = false;
        }
        i += len;
    }
    return ok;
}

}  // namespace ember::tokenizer

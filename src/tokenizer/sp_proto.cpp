#include "tokenizer/sp_proto.hpp"

#include <bit>
#include <cstring>

#include "runtime/fail.hpp"

namespace ember::tokenizer::sp_proto {

namespace {

enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// ---- writing ----

void put_varint(std::string& out, std::uint64_t v) {
    while (v >= 0x80) {
        out += static_cast<char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    out += static_cast<char>(v);
}
void put_tag(std::string& out, std::uint32_t field, WireType w) {
    put_varint(out, (static_cast<std::uint64_t>(field) << 3) | w);
}
void put_bytes(std::string& out, std::uint32_t field, std::string_view bytes) {
    put_tag(out, field, kLen);
    put_varint(out, bytes.size());
    out.append(bytes);
}
void put_int(std::string& out, std::uint32_t field, std::int64_t v) {  // int32/enum/bool
    put_tag(out, field, kVarint);
    put_varint(out, static_cast<std::uint64_t>(v));  // negatives take 10 bytes, as protobuf does
}
void put_float(std::string& out, std::uint32_t field, float v) {
    put_tag(out, field, kFixed32);
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) out += static_cast<char>((bits >> (8 * i)) & 0xFF);
}

// ---- reading ----

class Reader {
public:
    Reader(std::string_view bytes, std::size_t base, const std::string& name)
        : s_(bytes), base_(base), name_(name) {}
    bool done() const { return pos_ >= s_.size(); }
    std::size_t offset() const { return base_ + pos_; }

    std::uint64_t varint() {
        std::uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (pos_ >= s_.size()) error("truncated varint");
            const auto c = static_cast<unsigned char>(s_[pos_++]);
            v |= static_cast<std::uint64_t>(c & 0x7F) << shift;
            if (c < 0x80) return v;
        }
        error("varint longer than 10 bytes");
    }
    // Reads a field header; returns false at the end.
    bool next(std::uint32_t& field, std::uint32_t& wire) {
        if (done()) return false;
        const std::uint64_t tag = varint();
        field = static_cast<std::uint32_t>(tag >> 3);
        wire = static_cast<std::uint32_t>(tag & 7);
        if (field == 0) error("field number 0");
        return true;
    }
    std::string_view bytes(std::size_t* start = nullptr) {
        const std::uint64_t n = varint();
        if (n > s_.size() - pos_) error("length-delimited field runs past the end");
        if (start) *start = base_ + pos_;
        const std::string_view v = s_.substr(pos_, n);
        pos_ += n;
        return v;
    }
    float fixed32_float() {
        if (s_.size() - pos_ < 4) error("truncated fixed32");
        std::uint32_t bits = 0;
        for (int i = 0; i < 4; ++i) bits |= static_cast<std::uint32_t>(static_cast<unsigned char>(s_[pos_ + i])) << (8 * i);
        pos_ += 4;
        return std::bit_cast<float>(bits);
    }
    void skip(std::uint32_t wire) {
        switch (wire) {
            case kVarint: varint(); return;
            case kFixed64:
                if (s_.size() - pos_ < 8) error("truncated fixed64");
                pos_ += 8;
                return;
            case kLen: bytes(); return;
            case kFixed32:
                if (s_.size() - pos_ < 4) error("truncated fixed32");
                pos_ += 4;
                return;
            default: error("unsupported wire type " + std::to_string(wire));
        }
    }
    void expect(std::uint32_t wire, std::uint32_t want, const char* what) {
        if (wire != want) error(std::string("field ") + what + " has wire type " + std::to_string(wire));
    }
    [[noreturn]] void error(const std::string& what) const {
        fail(name_ + ": sentencepiece model at byte " + std::to_string(base_ + pos_) + ": " + what);
    }

private:
    std::string_view s_;
    std::size_t base_;
    const std::string& name_;
    std::size_t pos_ = 0;
};

std::int64_t as_int32(std::uint64_t v) { return static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); }

}  // namespace

Model parse(std::string_view bytes, const std::string& name) {
    Model m;
    Reader top(bytes, 0, name);
    std::uint32_t field = 0, wire = 0;
    while (top.next(field, wire)) {
        if (field == 1 || field == 2 || field == 3) {
            top.expect(wire, kLen, "message");
            std::size_t start = 0;
            const std::string_view body = top.bytes(&start);
            Reader r(body, start, name);
            std::uint32_t f = 0, w = 0;
            if (field == 1) {
                Piece p;
                while (r.next(f, w)) {
                    if (f == 1) { r.expect(w, kLen, "piece"); p.text = r.bytes(); }
                    else if (f == 2) { r.expect(w, kFixed32, "score"); p.score = r.fixed32_float(); }
                    else if (f == 3) { r.expect(w, kVarint, "type"); p.type = static_cast<int>(as_int32(r.varint())); }
                    else r.skip(w);
                }
                m.pieces.push_back(p);
            } else if (field == 2) {
                while (r.next(f, w)) {
                    if (w == kVarint && (f == 3 || f == 35 || (f >= 40 && f <= 43))) {
                        const std::uint64_t v = r.varint();
                        switch (f) {
                            case 3: m.model_type = static_cast<int>(as_int32(v)); break;
                            case 35: m.byte_fallback = v != 0; break;
                            case 40: m.unk_id = as_int32(v); break;
                            case 41: m.bos_id = as_int32(v); break;
                            case 42: m.eos_id = as_int32(v); break;
                            case 43: m.pad_id = as_int32(v); break;
                        }
                    } else {
                        r.skip(w);
                    }
                }
            } else {
                while (r.next(f, w)) {
                    if (f == 1 && w == kLen) m.normalizer_name = std::string(r.bytes());
                    else if (f == 2 && w == kLen) m.has_charsmap = !r.bytes().empty();
                    else if (f == 3 && w == kVarint) m.add_dummy_prefix = r.varint() != 0;
                    else if (f == 4 && w == kVarint) m.remove_extra_whitespaces = r.varint() != 0;
                    else if (f == 5 && w == kVarint) m.escape_whitespaces = r.varint() != 0;
                    else r.skip(w);
                }
            }
        } else {
            top.skip(wire);
        }
    }
    if (m.pieces.empty()) fail(name + ": sentencepiece model has no pieces");
    return m;
}

std::string build_bpe_model(const Vocab& vocab, bool add_dummy_prefix) {
    const std::size_t n = vocab.tokens.size();
    std::size_t n_bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (vocab.types[i] == TokenType::byte) ++n_bytes;
    }
    const bool byte_fallback = n_bytes == 256;

    std::string out;
    std::size_t total = 0;
    for (const auto& t : vocab.tokens) total += t.size() + 16;
    out.reserve(total + 256);
    std::string piece;
    for (std::size_t i = 0; i < n; ++i) {
        int type = 1;
        switch (vocab.types[i]) {
            case TokenType::normal: type = 1; break;
            case TokenType::unknown: type = 3; break;  // only vocab.unk is UNKNOWN (below)
            case TokenType::control: type = 3; break;
            case TokenType::user_defined: type = 4; break;
            case TokenType::unused: type = 5; break;
            case TokenType::byte: type = byte_fallback ? 6 : 5; break;
            case TokenType::undefined: type = 5; break;
        }
        if (static_cast<Token>(i) == vocab.unk) type = 2;
        piece.clear();
        put_bytes(piece, 1, vocab.tokens[i]);
        put_float(piece, 2, vocab.scores[i]);
        put_int(piece, 3, type);
        put_bytes(out, 1, piece);
    }

    auto control_or_none = [&](Token id) -> std::int64_t {
        return id >= 0 && vocab.types[id] == TokenType::control ? id : -1;
    };
    std::string trainer;
    put_int(trainer, 3, 2);  // model_type = BPE
    put_int(trainer, 4, static_cast<std::int64_t>(n));
    put_int(trainer, 35, byte_fallback ? 1 : 0);
    put_int(trainer, 40, vocab.unk);
    put_int(trainer, 41, control_or_none(vocab.bos));
    put_int(trainer, 42, control_or_none(vocab.eos));
    put_int(trainer, 43, control_or_none(vocab.pad));
    put_bytes(out, 2, trainer);

    std::string normalizer;
    put_bytes(normalizer, 1, "identity");
    put_int(normalizer, 3, add_dummy_prefix ? 1 : 0);
    put_int(normalizer, 4, vocab.remove_extra_whitespaces ? 1 : 0);
    put_int(normalizer, 5, 1);
    put_bytes(out, 3, normalizer);
    return out;
}

std::string normalizer_override_no_prefix() {
    std::string normalizer;
    put_int(normalizer, 3, 0);
    std::string out;
    put_bytes(out, 3, normalizer);
    return out;
}

}  // namespace ember::tokenizer::sp_proto

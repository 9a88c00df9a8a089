// Tokenizer: construction, special-token splitting, pieces, decoding.
#include "tokenizer/tokenizer.hpp"

#include <fstream>
#include <iterator>
#include <sstream>

#include "gguf/gguf_file.hpp"
#include "runtime/fail.hpp"
#include "tokenizer/backends.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "runtime/utf8.hpp"

namespace ember::tokenizer {

namespace {

// isspace() in the C locale, as llama.cpp tests the bytes next to a stripping special token.
bool is_ascii_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string unescape_spm(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        if (text.compare(i, kSpmSpace.size(), kSpmSpace) == 0) {
            out += ' ';
            i += kSpmSpace.size();
        } else {
            out += text[i++];
        }
    }
    return out;
}

}  // namespace

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::File& file) {
    Vocab vocab = read_gguf_vocab(file);
    vocab.finalize("tokenizer.ggml.tokens");
    if (vocab.kind == VocabKind::spm) return make_spm_tokenizer(std::move(vocab));
    return make_bpe_tokenizer(std::move(vocab));
}

std::unique_ptr<Tokenizer> Tokenizer::from_spm_model(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path + ": cannot open the sentencepiece model");
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail(path + ": cannot read the sentencepiece model");
    return make_spm_tokenizer_from_proto(bytes, path);
}

std::unique_ptr<Tokenizer> Tokenizer::from_spm_proto(std::string_view serialized,
                                                     const std::string& name) {
    return make_spm_tokenizer_from_proto(serialized, name);
}

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) { build_piece_cache(); }

Tokenizer::~Tokenizer() = default;

void Tokenizer::build_piece_cache() {
    const std::size_t n = vocab_.tokens.size();
    pieces_.resize(n);
    pieces_special_.resize(n);
    const bool spm = vocab_.kind == VocabKind::spm;
    for (std::size_t i = 0; i < n; ++i) {
        const std::string& text = vocab_.tokens[i];
        std::string piece;
        switch (vocab_.types[i]) {
            case TokenType::control:
            case TokenType::unknown:
                pieces_special_[i] = text;
                continue;
            case TokenType::user_defined:
                piece = text;
                break;
            case TokenType::normal:
                if (spm) {
                    piece = unescape_spm(text);
                } else {
                    unicode_to_bytes(text, piece);
                }
                break;
            case TokenType::byte:
                if (const int b = parse_byte_token(text); b >= 0) piece.assign(1, static_cast<char>(b));
                break;
            case TokenType::unused:
            case TokenType::undefined:
                break;
        }
        pieces_special_[i] = piece;
        pieces_[i] = std::move(piece);
    }
}

void Tokenizer::check_id(Token id) const {
    if (id < 0 || id >= n_vocab()) {
        fail("token id " + std::to_string(id) + " is outside the vocabulary (" +
             std::to_string(n_vocab()) + " tokens)");
    }
}

const std::string& Tokenizer::piece_ref(Token id, bool special) const {
    check_id(id);
    return special ? pieces_special_[id] : pieces_[id];
}

std::string Tokenizer::token_to_piece(Token id, bool special) const { return piece_ref(id, special); }

std::string Tokenizer::decode(std::span<const Token> ids, bool special) const {
    std::string out;
    bool at_start = vocab_.add_space_prefix;
    for (const Token id : ids) {
        const std::string& piece = piece_ref(id, special);
        if (at_start && !piece.empty()) {
            at_start = false;
            out.append(piece, piece[0] == ' ' ? 1 : 0, std::string::npos);
            continue;
        }
        out += piece;
    }
    return out;
}

bool Tokenizer::is_end_of_generation(Token id) const noexcept {
    return id >= 0 && id < n_vocab() && vocab_.eog[id] != 0;
}

bool Tokenizer::is_control(Token id) const noexcept {
    return id >= 0 && id < n_vocab() && vocab_.types[id] == TokenType::control;
}

TokenType Tokenizer::token_type(Token id) const {
    check_id(id);
    return vocab_.types[id];
}

const std::string& Tokenizer::token_text(Token id) const {
    check_id(id);
    return vocab_.tokens[id];
}

Token Tokenizer::find_token(std::string_view text) const {
    const auto it = vocab_.to_id.find(text);
    return it == vocab_.to_id.end() ? -1 : it->second;
}

std::vector<Tokenizer::Fragment> Tokenizer::split_special(std::string_view text,
                                                          bool parse_special) const {
    std::vector<Fragment> frags;
    if (text.empty()) return frags;
    frags.push_back({text, -1});
    std::vector<Fragment> next;
    for (const Token id : vocab_.specials) {
        const TokenType type = vocab_.types[id];
        if (!parse_special && type != TokenType::user_defined) continue;
        const std::string& needle = vocab_.tokens[id];
        bool any = false;
        for (const Fragment& f : frags) {
            if (f.token < 0 && f.text.find(needle) != std::string_view::npos) {
                any = true;
                break;
            }
        }
        if (!any) continue;
        next.clear();
        for (const Fragment& f : frags) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            std::string_view rest = f.text;
            for (std::size_t pos; (pos = rest.find(needle)) != std::string_view::npos;) {
                std::string_view left = rest.substr(0, pos);
                if (vocab_.strip[id] & Vocab::kStripLeft) {
                    while (!left.empty() && is_ascii_space(left.back())) left.remove_suffix(1);
                }
                if (!left.empty()) next.push_back({left, -1});
                next.push_back({{}, id});
                rest.remove_prefix(pos + needle.size());
                if (vocab_.strip[id] & Vocab::kStripRight) {
                    while (!rest.empty() && is_ascii_space(rest.front())) rest.remove_prefix(1);
                }
            }
            if (!rest.empty()) next.push_back({rest, -1});
        }
        frags.swap(next);
    }
    return frags;
}

// ---- StreamDecoder ---------------------------------------------------------------------------

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool strip_leading_space, bool special)
    : tokenizer_(&tokenizer),
      strip_(strip_leading_space && tokenizer.strips_leading_space()),
      special_(special) {}

std::string StreamDecoder::push(Token id) {
    const std::string& piece = tokenizer_->piece_ref(id, special_);
    if (piece.empty()) return {};
    std::size_t skip = 0;
    if (at_start_) {
        at_start_ = false;
        if (strip_ && piece[0] == ' ') skip = 1;
    }
    pending_.append(piece, skip, std::string::npos);
    std::string out;
    const std::size_t used = sanitize_utf8(pending_, false, out);
    pending_.erase(0, used);
    return out;
}

std::string StreamDecoder::flush() {
    std::string out;
    sanitize_utf8(pending_, true, out);
    pending_.clear();
    return out;
}

void StreamDecoder::reset() {
    pending_.clear();
    at_start_ = true;
}

}  // namespace ember::tokenizer

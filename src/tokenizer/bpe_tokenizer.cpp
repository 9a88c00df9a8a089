// Byte-level BPE (GPT-2 family): regex pre-tokenizer, bytes mapped to unicode characters, then
// the lowest-ranked adjacent pair merged until no merge applies (leftmost first on equal rank),
// as llama.cpp's llm_tokenizer_bpe_session.
#include <algorithm>
#include <array>
#include <queue>
#include <unordered_map>

#include "runtime/fail.hpp"
#include "tokenizer/backends.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "tokenizer/pretokenizer.hpp"

namespace ember::tokenizer {

namespace {

struct Merge {
    std::int32_t rank;
    Token merged;
};

inline std::uint64_t pair_key(Token a, Token b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
           static_cast<std::uint32_t>(b);
}

struct Symbol {
    Token id;
    int prev, next;
};

struct Bigram {
    std::int32_t rank;
    int left, right;
    Token left_id, right_id;
    bool operator<(const Bigram& o) const {  // priority_queue pops the "largest": lowest rank, then leftmost
        return rank != o.rank ? rank > o.rank : left > o.left;
    }
};

class BpeTokenizer final : public Tokenizer {
public:
    explicit BpeTokenizer(Vocab vocab)
        : Tokenizer(std::move(vocab)), pre_(vocab_.pre, vocab_.name) {
        const auto& b2u = byte_to_unicode();
        for (int b = 0; b < 256; ++b) byte_token_[b] = find_token(b2u[b]);
        merges_.reserve(vocab_.merges.size() * 2);
        for (std::size_t i = 0; i < vocab_.merges.size(); ++i) {
            const std::string& m = vocab_.merges[i];
            auto bad = [&](const std::string& why) {
                fail(vocab_.name + ": key 'tokenizer.ggml.merges': merge " + std::to_string(i) + " '" +
                     m.substr(0, 80) + "' " + why);
            };
            const std::size_t pos = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
            if (pos == std::string::npos || pos + 1 >= m.size()) bad("is not two tokens separated by a space");
            const std::string_view left(m.data(), pos), right(m.data() + pos + 1, m.size() - pos - 1);
            const Token l = find_token(left), r = find_token(right);
            if (l < 0) bad("names a token that is not in the vocabulary ('" + std::string(left.substr(0, 80)) + "')");
            if (r < 0) bad("names a token that is not in the vocabulary ('" + std::string(right.substr(0, 80)) + "')");
            std::string joined(left);
            joined += right;
            const Token merged = find_token(joined);
            if (merged < 0) bad("produces a token that is not in the vocabulary");
            merges_.emplace(pair_key(l, r), Merge{static_cast<std::int32_t>(i), merged});  // first wins
        }
    }

    std::vector<Token> encode(std::string_view text, bool add_bos, bool parse_special) const override {
        std::vector<Token> out;
        if (add_bos && vocab_.add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
        Scratch s;
        for (const Fragment& f : split_special(text, parse_special)) {
            if (f.token >= 0) {
                out.push_back(f.token);
                continue;
            }
            s.words.clear();
            pre_.split(f.text, s.words);
            for (const std::string_view w : s.words) encode_word(w, s, out);
        }
        if (add_bos && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
        return out;
    }

private:
    struct Scratch {
        std::vector<std::string_view> words;
        std::vector<Symbol> symbols;
        std::vector<Bigram> heap;
        std::string encoded;
        // Words already seen in this call -> their tokens (offset, count into `cached`).
        std::unordered_map<std::string_view, std::pair<std::uint32_t, std::uint32_t>> cache;
        std::vector<Token> cached;
    };

    void emit_missing(std::vector<Token>& out) const {
        // A byte whose character is not in the vocabulary: <unk> when there is one, else dropped
        // (llama.cpp drops it too).
        if (vocab_.unk >= 0) out.push_back(vocab_.unk);
    }

    void try_bigram(Scratch& s, int left) const {
        if (left < 0) return;
        const int right = s.symbols[left].next;
        if (right < 0) return;
        const Token a = s.symbols[left].id, b = s.symbols[right].id;
        if (a < 0 || b < 0) return;
        const auto it = merges_.find(pair_key(a, b));
        if (it == merges_.end()) return;
        s.heap.push_back({it->second.rank, left, right, a, b});
        std::push_heap(s.heap.begin(), s.heap.end());
    }

    void encode_word(std::string_view word, Scratch& s, std::vector<Token>& out) const {
        if (word.size() == 1) {
            const Token id = byte_token_[static_cast<unsigned char>(word[0])];
            if (id >= 0) out.push_back(id); else emit_missing(out);
            return;
        }
        if (const auto it = s.cache.find(word); it != s.cache.end()) {
            const auto [off, cnt] = it->second;
            out.insert(out.end(), s.cached.begin() + off, s.cached.begin() + off + cnt);
            return;
        }
        const std::size_t out_begin = out.size();
        encode_word_uncached(word, s, out);
        if (s.cached.size() < (std::size_t{1} << 24)) {
            const auto off = static_cast<std::uint32_t>(s.cached.size());
            s.cached.insert(s.cached.end(), out.begin() + out_begin, out.end());
            s.cache.emplace(word, std::make_pair(off, static_cast<std::uint32_t>(out.size() - out_begin)));
        }
    }

    void encode_word_uncached(std::string_view word, Scratch& s, std::vector<Token>& out) const {
        if (pre_.ignore_merges()) {
            const auto& b2u = byte_to_unicode();
            s.encoded.clear();
            for (const char c : word) s.encoded += b2u[static_cast<unsigned char>(c)];
            if (const Token id = find_token(s.encoded); id >= 0) {
                out.push_back(id);
                return;
            }
        }
        const int n = static_cast<int>(word.size());
        s.symbols.resize(n);
        for (int i = 0; i < n; ++i) {
            s.symbols[i] = {byte_token_[static_cast<unsigned char>(word[i])], i - 1, i + 1 < n ? i + 1 : -1};
        }
        s.heap.clear();
        for (int i = 0; i + 1 < n; ++i) try_bigram(s, i);
        while (!s.heap.empty()) {
            std::pop_heap(s.heap.begin(), s.heap.end());
            const Bigram b = s.heap.back();
            s.heap.pop_back();
            Symbol& l = s.symbols[b.left];
            // Stale entry: one side was merged away or changed since it was queued.
            if (l.id != b.left_id || l.next != b.right || s.symbols[b.right].id != b.right_id) continue;
            Symbol& r = s.symbols[b.right];
            l.id = merges_.at(pair_key(b.left_id, b.right_id)).merged;
            l.next = r.next;
            if (r.next >= 0) s.symbols[r.next].prev = b.left;
            r.id = -2;  // dead
            r.next = r.prev = -1;
            try_bigram(s, l.prev);
            try_bigram(s, b.left);
        }
        for (int i = 0; i >= 0 && i < n; i = s.symbols[i].next) {
            const Token id = s.symbols[i].id;
            if (id >= 0) out.push_back(id); else emit_missing(out);
        }
    }

    PreTokenizer pre_;
    std::array<Token, 256> byte_token_{};
    std::unordered_map<std::uint64_t, Merge> merges_;
};

}  // namespace

std::unique_ptr<Tokenizer> make_bpe_tokenizer(Vocab vocab) {
    return std::make_unique<BpeTokenizer>(std::move(vocab));
}

}  // namespace ember::tokenizer

// SPM (SentencePiece) tokenizer: the sentencepiece library encodes raw text; ember splits special
// tokens first and adds BOS/EOS the way llama.cpp does.
#include <sentencepiece_processor.h>

#include "runtime/fail.hpp"
#include "tokenizer/backends.hpp"
#include "tokenizer/sp_proto.hpp"

namespace ember::tokenizer {

namespace {


// True when no piece has '▁' after another character (pieces are "▁*" + text without '▁', as
// sentencepiece trains them with split_by_whitespace). Then no merge can cross the start of a
// whitespace run, and long texts can be encoded run by run with identical results.
bool whitespace_splittable(const Vocab& v) {
    for (const std::string& t : v.tokens) {
        std::size_t i = 0;
        while (t.compare(i, kSpmSpace.size(), kSpmSpace) == 0) i += kSpmSpace.size();
        if (t.find(kSpmSpace, i) != std::string::npos) return false;
    }
    return true;
}

// Texts are handed to sentencepiece in chunks of about this many bytes (its per-call cost is
// high, and one call on a very long text is slower per byte).
constexpr std::size_t kChunkBytes = 1024;

bool space_or_escape_before(std::string_view t, std::size_t i) {
    if (t[i - 1] == ' ') return true;
    return i >= 3 && t.compare(i - 3, 3, kSpmSpace) == 0;
}

class SpmTokenizer final : public Tokenizer {
public:
    /// `manual_prefix`: the model's own dummy prefix is disabled and ember adds the space (so a
    /// text can be encoded in chunks); otherwise sentencepiece adds it per call.
    SpmTokenizer(Vocab vocab, std::string_view serialized, bool manual_prefix)
        : Tokenizer(std::move(vocab)), manual_prefix_(manual_prefix) {
        const auto status = processor_.LoadFromSerializedProto(serialized);
        if (!status.ok()) {
            fail(vocab_.name + ": sentencepiece rejected the vocabulary: " + status.ToString());
        }
        if (processor_.GetPieceSize() != static_cast<int>(vocab_.tokens.size())) {
            fail(vocab_.name + ": sentencepiece loaded " + std::to_string(processor_.GetPieceSize()) +
                 " pieces for " + std::to_string(vocab_.tokens.size()) + " tokens");
        }
    }

    std::vector<Token> encode(std::string_view text, bool add_bos, bool parse_special) const override {
        std::vector<Token> out;
        if (add_bos && vocab_.add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
        std::vector<int> ids;
        std::string chunk;
        // Every raw fragment starts the text or follows a special token, so it gets the dummy
        // prefix: llama.cpp's "prefix with space if previous is special".
        for (const Fragment& f : split_special(text, parse_special)) {
            if (f.token >= 0) {
                out.push_back(f.token);
                continue;
            }
            if (!manual_prefix_) {
                encode_piece(f.text, ids, out);
                continue;
            }
            const std::string_view t = f.text;
            std::size_t begin = 0;
            for (std::size_t i = 1; i <= t.size(); ++i) {
                if (i < t.size() &&
                    (i - begin < kChunkBytes || t[i] != ' ' || space_or_escape_before(t, i))) {
                    continue;
                }
                chunk.clear();
                if (begin == 0 && vocab_.add_space_prefix) chunk += ' ';
                chunk.append(t.substr(begin, i - begin));
                encode_piece(chunk, ids, out);
                begin = i;
            }
        }
        if (add_bos && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
        return out;
    }

private:
    void encode_piece(std::string_view piece, std::vector<int>& ids, std::vector<Token>& out) const {
        ids.clear();
        const auto status = processor_.Encode(piece, &ids);
        if (!status.ok()) fail(vocab_.name + ": sentencepiece encode failed: " + status.ToString());
        for (const int id : ids) {
            // Defensive: never hand out an id the vocabulary does not have.
            if (id < 0 || id >= static_cast<int>(vocab_.tokens.size())) {
                fail(vocab_.name + ": sentencepiece produced id " + std::to_string(id));
            }
            out.push_back(static_cast<Token>(id));
        }
    }

    sentencepiece::SentencePieceProcessor processor_;
    bool manual_prefix_;
};

TokenType piece_type(int t) {
    switch (t) {
        case 1: return TokenType::normal;
        case 2: return TokenType::unknown;
        case 3: return TokenType::control;
        case 4: return TokenType::user_defined;
        case 5: return TokenType::unused;
        case 6: return TokenType::byte;
        default: return TokenType::undefined;
    }
}

}  // namespace

std::unique_ptr<Tokenizer> make_spm_tokenizer(Vocab vocab) {
    if (vocab.unk < 0) {
        fail(vocab.name + ": SPM vocabulary has no unknown token (tokenizer.ggml.unknown_token_id)");
    }
    // Chunked encoding (ember adds the dummy prefix) when whitespace is kept as it is.
    const bool manual = !vocab.remove_extra_whitespaces && whitespace_splittable(vocab);
    const std::string proto = sp_proto::build_bpe_model(vocab, manual ? false : vocab.add_space_prefix);
    return std::make_unique<SpmTokenizer>(std::move(vocab), proto, manual);
}

std::unique_ptr<Tokenizer> make_spm_tokenizer_from_proto(std::string_view serialized,
                                                         const std::string& name) {
    const sp_proto::Model m = sp_proto::parse(serialized, name);
    Vocab v;
    v.kind = VocabKind::spm;
    v.name = name;
    v.tokens.reserve(m.pieces.size());
    for (const auto& p : m.pieces) {
        v.tokens.emplace_back(p.text);
        v.scores.push_back(p.score);
        v.types.push_back(piece_type(p.type));
    }
    const auto n = static_cast<std::int64_t>(m.pieces.size());
    auto id_or_none = [&](std::int64_t id) -> Token { return id >= 0 && id < n ? static_cast<Token>(id) : -1; };
    v.unk = id_or_none(m.unk_id);
    for (std::size_t i = 0; i < m.pieces.size(); ++i) {
        if (m.pieces[i].type == 2) v.unk = static_cast<Token>(i);
    }
    v.bos = id_or_none(m.bos_id);
    v.eos = id_or_none(m.eos_id);
    v.pad = id_or_none(m.pad_id);
    v.add_bos = v.bos >= 0;
    v.add_eos = false;
    v.add_space_prefix = m.add_dummy_prefix;
    v.remove_extra_whitespaces = m.remove_extra_whitespaces;
    v.finalize("sentencepiece pieces");
    // With the plain identity normalizer, switch the model's dummy prefix off (a second
    // normalizer_spec merges into the first, as protobuf parsing does) and add it in ember, so
    // long texts can be encoded whitespace run by whitespace run.
    const bool manual = !m.remove_extra_whitespaces && m.escape_whitespaces && !m.has_charsmap &&
                        whitespace_splittable(v);
    if (!manual) return std::make_unique<SpmTokenizer>(std::move(v), serialized, false);
    const std::string patched = std::string(serialized) + sp_proto::normalizer_override_no_prefix();
    return std::make_unique<SpmTokenizer>(std::move(v), patched, true);
}

}  // namespace ember::tokenizer

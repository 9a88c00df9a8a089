// SPM (SentencePiece) tokenizer: the sentencepiece library encodes raw text; ember splits special
// tokens first and adds BOS/EOS the way llama.cpp does.
#include <sentencepiece_processor.h>

#include "runtime/fail.hpp"
#include "tokenizer/backends.hpp"
#include "tokenizer/sp_proto.hpp"

namespace ember::tokenizer {

namespace {

class SpmTokenizer final : public Tokenizer {
public:
    SpmTokenizer(Vocab vocab, std::string_view serialized) : Tokenizer(std::move(vocab)) {
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
        // Every raw fragment starts the text or follows a special token, so sentencepiece's dummy
        // prefix (added per call) is exactly llama.cpp's "prefix with space if previous is special".
        for (const Fragment& f : split_special(text, parse_special)) {
            if (f.token >= 0) {
                out.push_back(f.token);
                continue;
            }
            ids.clear();
            const auto status = processor_.Encode(f.text, &ids);
            if (!status.ok()) fail(vocab_.name + ": sentencepiece encode failed: " + status.ToString());
            for (const int id : ids) {
                // Defensive: never hand out an id the vocabulary does not have.
                if (id < 0 || id >= static_cast<int>(vocab_.tokens.size())) {
                    fail(vocab_.name + ": sentencepiece produced id " + std::to_string(id));
                }
                out.push_back(static_cast<Token>(id));
            }
        }
        if (add_bos && vocab_.add_eos && vocab_.eos >= 0) out.push_back(vocab_.eos);
        return out;
    }

private:
    sentencepiece::SentencePieceProcessor processor_;
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
    const std::string proto = sp_proto::build_bpe_model(vocab);
    return std::make_unique<SpmTokenizer>(std::move(vocab), proto);
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
    return std::make_unique<SpmTokenizer>(std::move(v), serialized);
}

}  // namespace ember::tokenizer

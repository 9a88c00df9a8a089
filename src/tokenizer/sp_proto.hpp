// The few fields of sentencepiece's ModelProto (sentencepiece_model.proto) ember reads and
// writes, in protobuf wire format: the Debian sentencepiece package ships no protobuf headers.
//
//   ModelProto     { repeated SentencePiece pieces = 1; TrainerSpec trainer_spec = 2;
//                    NormalizerSpec normalizer_spec = 3; }
//   SentencePiece  { string piece = 1; float score = 2; Type type = 3; }   Type: NORMAL=1 ..
//                    UNKNOWN=2, CONTROL=3, USER_DEFINED=4, UNUSED=5, BYTE=6
//   TrainerSpec    { ModelType model_type = 3 (UNIGRAM=1, BPE=2); int32 vocab_size = 4;
//                    bool byte_fallback = 35; int32 unk_id = 40, bos_id = 41, eos_id = 42,
//                    pad_id = 43; }
//   NormalizerSpec { string name = 1; bytes precompiled_charsmap = 2; bool add_dummy_prefix = 3;
//                    bool remove_extra_whitespaces = 4; bool escape_whitespaces = 5; }
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.hpp"

namespace ember::tokenizer::sp_proto {

struct Piece {
    std::string_view text;
    float score = 0.0f;
    int type = 1;
};

struct Model {
    std::vector<Piece> pieces;
    int model_type = 1;  // UNIGRAM unless the trainer spec says otherwise
    bool byte_fallback = false;
    std::int64_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
    std::string normalizer_name;
    bool has_charsmap = false;
    bool add_dummy_prefix = true;
    bool remove_extra_whitespaces = true;
    bool escape_whitespaces = true;
};

/// Parses a serialized ModelProto (views point into `bytes`). Throws ember::Error naming `name`
/// and the byte offset for malformed input.
Model parse(std::string_view bytes, const std::string& name);

/// Serializes a BPE-type ModelProto for an SPM vocabulary from GGUF: identity normalizer,
/// whitespace collapsing as `vocab.remove_extra_whitespaces`, escaped whitespace, the given dummy
/// prefix flag, byte fallback when all 256 <0xXX> byte tokens exist.
std::string build_bpe_model(const Vocab& vocab, bool add_dummy_prefix);

/// A ModelProto fragment holding only normalizer_spec { add_dummy_prefix: false }; appended to a
/// serialized model it overrides that one field (protobuf merges repeated message fields).
std::string normalizer_override_no_prefix();

}  // namespace ember::tokenizer::sp_proto

// Factories of the concrete tokenizers (internal to src/tokenizer).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "tokenizer/tokenizer.hpp"

namespace ember::tokenizer {

/// SentencePiece's word-boundary marker, U+2581 '▁', which stands for a space in SPM pieces.
inline constexpr std::string_view kSpmSpace = "\xE2\x96\x81";

/// SPM from a finalized vocabulary: builds a sentencepiece ModelProto (BPE type) from it.
std::unique_ptr<Tokenizer> make_spm_tokenizer(Vocab vocab);
/// SPM from a serialized sentencepiece ModelProto (a .model file's bytes).
std::unique_ptr<Tokenizer> make_spm_tokenizer_from_proto(std::string_view serialized,
                                                         const std::string& name);
/// Byte-level BPE from a finalized vocabulary with merges.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(Vocab vocab);

}  // namespace ember::tokenizer

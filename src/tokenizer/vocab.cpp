// Vocabulary validation and the GGUF "tokenizer.ggml.*" reader.
#include "tokenizer/vocab.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "ember/text.hpp"
#include "gguf/gguf_file.hpp"
#include "runtime/fail.hpp"

namespace ember::tokenizer {

namespace {

// A token longer than this is not a real vocabulary entry (the longest in common models are a
// few hundred bytes of whitespace or punctuation).
constexpr std::size_t kMaxTokenBytes = 16384;
constexpr std::size_t kMaxVocab = std::size_t{1} << 24;

// Texts llama.cpp treats as end of generation (llama-vocab.cpp, special_eog_ids).
constexpr std::array kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<end_of_turn>",
    "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
};
// Texts llama.cpp picks the EOT token from when the file names none.
constexpr std::array kEotTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<end_of_utterance>",
};

const gguf::KeyValue* find_kv(const gguf::File& file, std::string_view key) {
    for (const auto& kv : file.metadata()) {
        if (kv.key == key) return &kv;
    }
    return nullptr;
}

[[noreturn]] void fail_key(const gguf::File& file, const gguf::KeyValue* kv, std::string_view key,
                           const std::string& what) {
    std::string msg = file.name() + ": key '" + std::string(key) + "'";
    if (kv) msg += " at byte " + std::to_string(kv->offset);
    fail(msg + ": " + what);
}

// Converts errors thrown by gguf::Value's checked getters into messages with the offset.
template <class Fn>
decltype(auto) with_key(const gguf::File& file, const gguf::KeyValue* kv, std::string_view key, Fn&& fn) {
    try {
        return fn();
    } catch (const Error& e) {
        fail_key(file, kv, key, e.what());
    }
}

const gguf::Array* get_array(const gguf::File& file, std::string_view key, bool required,
                             const gguf::KeyValue** kv_out) {
    const gguf::KeyValue* kv = find_kv(file, key);
    *kv_out = kv;
    if (!kv) {
        if (required) fail(file.name() + ": key '" + std::string(key) + "' is missing");
        return nullptr;
    }
    if (kv->value.type != gguf::ValueType::array) {
        fail_key(file, kv, key,
                 "expected an array, found " + std::string(gguf::value_type_name(kv->value.type)));
    }
    return &with_key(file, kv, key, [&]() -> const gguf::Array& { return kv->value.as_array(key); });
}

// A special token id key: absent -> `fallback`; -1 / 0xFFFFFFFF -> none; else in [0, n_vocab).
Token read_id(const gguf::File& file, std::string_view key, Token fallback, std::size_t n_vocab) {
    const gguf::KeyValue* kv = find_kv(file, key);
    if (!kv) return fallback;
    if (!kv->value.is_integer()) {
        fail_key(file, kv, key,
                 "expected an integer id, found " +
                     std::string(gguf::value_type_name(kv->value.type)));
    }
    std::int64_t id = 0;
    if (const auto* u = std::get_if<std::uint64_t>(&kv->value.data)) {
        if (*u == 0xFFFFFFFFu || *u == std::numeric_limits<std::uint64_t>::max()) return -1;
        if (*u >= n_vocab) {
            fail_key(file, kv, key,
                     "token id " + std::to_string(*u) + " is outside the vocabulary of " +
                         std::to_string(n_vocab) + " tokens");
        }
        id = static_cast<std::int64_t>(*u);
    } else {
        id = std::get<std::int64_t>(kv->value.data);
        if (id == -1) return -1;
        if (id < 0 || static_cast<std::uint64_t>(id) >= n_vocab) {
            fail_key(file, kv, key,
                     "token id " + std::to_string(id) + " is outside the vocabulary of " +
                         std::to_string(n_vocab) + " tokens");
        }
    }
    return static_cast<Token>(id);
}

bool read_bool(const gguf::File& file, std::string_view key, bool fallback) {
    const gguf::KeyValue* kv = find_kv(file, key);
    if (!kv) return fallback;
    return with_key(file, kv, key, [&] { return kv->value.as_bool(key); });
}

}  // namespace

int parse_byte_token(std::string_view text) noexcept {
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = hex(text[3]), lo = hex(text[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

void Vocab::finalize(const std::string& where) {
    const std::string ctx = name + ": " + where + ": ";
    const std::size_t n = tokens.size();
    if (n == 0) fail(ctx + "the vocabulary is empty");
    if (n > kMaxVocab) fail(ctx + "the vocabulary has " + std::to_string(n) + " tokens, too many");
    if (scores.empty()) scores.assign(n, 0.0f);
    if (types.empty()) types.assign(n, TokenType::normal);
    if (scores.size() != n || types.size() != n) {
        fail(ctx + "token, score and type arrays differ in length (" + std::to_string(n) + ", " +
             std::to_string(scores.size()) + ", " + std::to_string(types.size()) + ")");
    }
    auto check_special = [&](Token id, const char* what) {
        if (id < -1 || (id >= 0 && static_cast<std::size_t>(id) >= n)) {
            fail(ctx + what + " id " + std::to_string(id) + " is outside the vocabulary of " +
                 std::to_string(n) + " tokens");
        }
    };
    check_special(bos, "BOS");
    check_special(eos, "EOS");
    check_special(eot, "EOT");
    check_special(eom, "EOM");
    check_special(unk, "unknown-token");
    check_special(pad, "padding");
    check_special(sep, "separator");
    if (add_bos && bos < 0) fail(ctx + "add_bos_token is true but the vocabulary has no BOS id");
    if (add_eos && eos < 0) fail(ctx + "add_eos_token is true but the vocabulary has no EOS id");

    to_id.clear();
    to_id.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string& t = tokens[i];
        if (t.empty()) fail(ctx + "token " + std::to_string(i) + " is empty");
        if (t.size() > kMaxTokenBytes) {
            fail(ctx + "token " + std::to_string(i) + " is " + std::to_string(t.size()) +
                 " bytes long (limit " + std::to_string(kMaxTokenBytes) + ")");
        }
        if (types[i] == TokenType::byte && parse_byte_token(t) < 0) {
            fail(ctx + "token " + std::to_string(i) + " '" + printable(t, 64) +
                 "' has the byte type but is not of the form <0xXX>");
        }
        const auto [it, inserted] = to_id.emplace(t, static_cast<Token>(i));
        if (!inserted) {
            fail(ctx + "duplicate token '" + printable(t, 64) + "' at ids " +
                 std::to_string(it->second) + " and " + std::to_string(i));
        }
    }

    auto lookup = [&](std::string_view text) -> Token {
        const auto it = to_id.find(text);
        return it == to_id.end() ? -1 : it->second;
    };
    if (eot < 0) {
        for (const char* text : kEotTexts) {
            if (const Token id = lookup(text); id >= 0) {
                eot = id;
                break;
            }
        }
    }
    if (eom < 0) eom = lookup("<|eom_id|>");

    eog.assign(n, 0);
    for (const char* text : kEogTexts) {
        if (const Token id = lookup(text); id >= 0) eog[id] = 1;
    }
    for (const Token id : {eos, eot, eom}) {
        if (id >= 0) eog[id] = 1;
    }
    // llama.cpp renders end-of-generation tokens as control tokens whatever the file says.
    for (std::size_t i = 0; i < n; ++i) {
        if (eog[i] && types[i] != TokenType::control) types[i] = TokenType::control;
    }

    specials.clear();
    for (std::size_t i = 0; i < n; ++i) {
        const TokenType t = types[i];
        if (t == TokenType::control || t == TokenType::user_defined || t == TokenType::unknown) {
            specials.push_back(static_cast<Token>(i));
        }
    }
    std::stable_sort(specials.begin(), specials.end(), [&](Token a, Token b) {
        return tokens[a].size() > tokens[b].size();
    });

    strip.assign(n, 0);
    const auto set_strip = [&](std::string_view text, std::uint8_t bit, bool on) {
        if (const Token id = lookup(text); id >= 0) strip[id] = on ? (strip[id] | bit) : (strip[id] & ~bit);
    };
    if (pre == "jina-v2-de" || pre == "jina-v2-es" || pre == "jina-v2-code") {
        set_strip("<mask>", kStripLeft, true);
    } else if (model_name.find("phi-3") != std::string::npos || model_name.find("phi3") != std::string::npos) {
        for (const Token id : specials) strip[id] |= kStripRight;
        set_strip("</s>", kStripRight, true);
        for (const char* text : {"<unk>", "<s>", "<|endoftext|>"}) set_strip(text, kStripRight, false);
    }
}

Vocab read_gguf_vocab(const gguf::File& file) {
    Vocab v;
    v.name = file.name();
    if (const gguf::KeyValue* name_kv = find_kv(file, "general.name");
        name_kv && name_kv->value.type == gguf::ValueType::string) {
        for (const char c : name_kv->value.as_string("general.name")) {
            v.model_name += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
    }

    const gguf::KeyValue* model_kv = find_kv(file, "tokenizer.ggml.model");
    if (!model_kv) fail(file.name() + ": key 'tokenizer.ggml.model' is missing (no tokenizer)");
    const std::string model(with_key(file, model_kv, "tokenizer.ggml.model", [&] {
        return model_kv->value.as_string("tokenizer.ggml.model");
    }));
    if (model == "llama") {
        v.kind = VocabKind::spm;
    } else if (model == "gpt2") {
        v.kind = VocabKind::bpe;
    } else {
        fail_key(file, model_kv, "tokenizer.ggml.model",
                 "tokenizer model '" + printable(model, 64) +
                     "' is not supported (ember supports 'llama' (SPM) and 'gpt2' (BPE))");
    }
    if (const gguf::KeyValue* pre_kv = find_kv(file, "tokenizer.ggml.pre")) {
        v.pre = std::string(with_key(file, pre_kv, "tokenizer.ggml.pre", [&] {
            return pre_kv->value.as_string("tokenizer.ggml.pre");
        }));
    }

    const gguf::KeyValue* kv = nullptr;
    const gguf::Array* tokens = get_array(file, "tokenizer.ggml.tokens", true, &kv);
    if (tokens->element_type != gguf::ValueType::string) {
        fail_key(file, kv, "tokenizer.ggml.tokens",
                 "expected an array of strings, found an array of " +
                     std::string(gguf::value_type_name(tokens->element_type)));
    }
    const std::size_t n = tokens->items.size();
    if (n == 0) fail_key(file, kv, "tokenizer.ggml.tokens", "the vocabulary is empty");
    if (n > kMaxVocab) fail_key(file, kv, "tokenizer.ggml.tokens", "too many tokens");
    v.tokens.reserve(n);
    for (const auto& item : tokens->items) {
        v.tokens.emplace_back(with_key(file, kv, "tokenizer.ggml.tokens",
                                       [&] { return item.as_string("tokenizer.ggml.tokens"); }));
    }

    if (const gguf::Array* scores = get_array(file, "tokenizer.ggml.scores", false, &kv)) {
        const auto et = scores->element_type;
        if (et != gguf::ValueType::f32 && et != gguf::ValueType::i32 && et != gguf::ValueType::f64) {
            fail_key(file, kv, "tokenizer.ggml.scores",
                     "expected an array of f32, found an array of " +
                         std::string(gguf::value_type_name(et)));
        }
        if (scores->items.size() != n) {
            fail_key(file, kv, "tokenizer.ggml.scores",
                     "has " + std::to_string(scores->items.size()) + " entries for " +
                         std::to_string(n) + " tokens");
        }
        v.scores.reserve(n);
        for (const auto& item : scores->items) {
            v.scores.push_back(with_key(file, kv, "tokenizer.ggml.scores",
                                        [&] { return item.as_f32("tokenizer.ggml.scores"); }));
        }
    }

    if (const gguf::Array* types = get_array(file, "tokenizer.ggml.token_type", false, &kv)) {
        const auto et = types->element_type;
        if (et != gguf::ValueType::i32 && et != gguf::ValueType::u32 && et != gguf::ValueType::i8 &&
            et != gguf::ValueType::u8 && et != gguf::ValueType::i16 && et != gguf::ValueType::u16) {
            fail_key(file, kv, "tokenizer.ggml.token_type",
                     "expected an array of i32, found an array of " +
                         std::string(gguf::value_type_name(et)));
        }
        if (types->items.size() != n) {
            fail_key(file, kv, "tokenizer.ggml.token_type",
                     "has " + std::to_string(types->items.size()) + " entries for " +
                         std::to_string(n) + " tokens");
        }
        v.types.reserve(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t t = with_key(file, kv, "tokenizer.ggml.token_type", [&] {
                return types->items[i].as_i64("tokenizer.ggml.token_type");
            });
            if (t < 0 || t > 6) {
                fail_key(file, kv, "tokenizer.ggml.token_type",
                         "token " + std::to_string(i) + " has type " + std::to_string(t) +
                             " (valid types are 0..6)");
            }
            v.types.push_back(static_cast<TokenType>(t));
        }
    }

    if (v.kind == VocabKind::bpe) {
        const gguf::Array* merges = get_array(file, "tokenizer.ggml.merges", true, &kv);
        if (merges->element_type != gguf::ValueType::string) {
            fail_key(file, kv, "tokenizer.ggml.merges",
                     "expected an array of strings, found an array of " +
                         std::string(gguf::value_type_name(merges->element_type)));
        }
        v.merges.reserve(merges->items.size());
        for (const auto& item : merges->items) {
            v.merges.emplace_back(with_key(file, kv, "tokenizer.ggml.merges",
                                           [&] { return item.as_string("tokenizer.ggml.merges"); }));
        }
    }

    // Defaults as llama.cpp: SPM assumes <unk>=0, <s>=1, </s>=2 when the keys are absent.
    const bool spm = v.kind == VocabKind::spm;
    auto def = [&](Token id) -> Token { return spm && static_cast<std::size_t>(id) < n ? id : -1; };
    v.bos = read_id(file, "tokenizer.ggml.bos_token_id", def(1), n);
    v.eos = read_id(file, "tokenizer.ggml.eos_token_id", def(2), n);
    v.unk = read_id(file, "tokenizer.ggml.unknown_token_id", def(0), n);
    v.eot = read_id(file, "tokenizer.ggml.eot_token_id", -1, n);
    v.eom = read_id(file, "tokenizer.ggml.eom_token_id", -1, n);
    v.pad = read_id(file, "tokenizer.ggml.padding_token_id", -1, n);
    v.sep = read_id(file, "tokenizer.ggml.seperator_token_id", -1, n);

    // add_bos defaults: SPM yes; BPE only for the Llama-3 family of pre-tokenizers (llama.cpp).
    bool add_bos_default = spm;
    if (!spm) {
        for (const char* p : {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral",
                              "midm-2.0", "lfm2", "tekken", "chameleon"}) {
            if (v.pre == p) add_bos_default = true;
        }
    }
    v.add_bos = read_bool(file, "tokenizer.ggml.add_bos_token", add_bos_default);
    v.add_eos = read_bool(file, "tokenizer.ggml.add_eos_token", false);
    v.add_space_prefix = read_bool(file, "tokenizer.ggml.add_space_prefix", spm);
    v.remove_extra_whitespaces = read_bool(file, "tokenizer.ggml.remove_extra_whitespaces", false);
    // A defaulted BOS that the file never named does not make add_bos an error.
    if (v.add_bos && v.bos < 0 && !find_kv(file, "tokenizer.ggml.add_bos_token")) v.add_bos = false;
    return v;
}

}  // namespace ember::tokenizer

#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pretokenizer.hpp"

#include <pcre2.h>

#include <cstdio>
#include <mutex>
#include <set>

#include "runtime/fail.hpp"

namespace ember::tokenizer {

namespace {

// Regexes as llama.cpp (llama-vocab.cpp) writes them; "(?i:'s|...)" is spelled out as classes.
constexpr const char* kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Tekken (Mistral Nemo / Small 3) and GPT-4o as in their tokenizer.json (PCRE2 has the classes).
constexpr const char* kTekken =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kGpt4o =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// DeepSeek LLM and Coder (llama.cpp's DEEPSEEK_LLM / DEEPSEEK_CODER lists); "$" is written
// "\z" (end of the piece: PCRE2's "$" would also match before a final newline).
constexpr const char* kDeepseekLetters =
    R"(\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+)";
constexpr const char* kDeepseekPunct = R"(\s?[!-/:-~！-／：-～‘-‟　-。]+)";
constexpr const char* kDeepseekCjk = R"([一-龥ࠀ-一가-퟿]+)";

struct Spec {
    std::vector<const char*> names;
    std::vector<const char*> regexes;
    bool ignore_merges;
};

const std::vector<Spec>& specs() {
    static const std::vector<Spec> table = {
        {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
          "jina-v5-nano"},
         {kLlama3}, true},
        {{"dbrx", "smaug-bpe"}, {kLlama3}, false},
        {{"qwen2", "deepseek-r1-qwen", "megrez", "stablelm2", "hunyuan", "kormo", "f2llmv2"},
         {kQwen2}, false},
        {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
          "mellum", "modern-bert", "mpt", "olmo", "jais", "trillion", "granite-docling", "exaone4",
          "jina-v1-en", "jina-v2-code", "roberta-bpe"},
         {kGpt2}, false},
        {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b", "mellum2"},
         {R"(\p{N})", kGpt2}, false},
        {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}, false},
        {{"default"}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}, false},
        {{"tekken"}, {kTekken}, true},
        {{"deepseek-llm"}, {R"([\r\n])", kDeepseekLetters, kDeepseekPunct, R"(\s+\z)", kDeepseekCjk, R"(\p{N}+)"}, false},
        {{"deepseek-coder"}, {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepseekCjk, R"(\p{N})"}, false},
        {{"gpt-4o", "llama4"}, {kGpt4o}, false},
    };
    return table;
}

void warn_once(const std::string& key, const std::string& message) {
    static std::mutex mutex;
    static std::set<std::string> warned;
    std::lock_guard<std::mutex> lock(mutex);
    if (warned.insert(key).second) std::fprintf(stderr, "ember: warning: %s\n", message.c_str());
}

std::string pcre2_message(int code) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(code, buf, sizeof buf);
    return reinterpret_cast<const char*>(buf);
}

}  // namespace

struct PreTokenizer::Compiled {
    pcre2_code* code = nullptr;
    ~Compiled() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(std::string_view pre, const std::string& file_name) {
    const Spec* chosen = nullptr;
    const std::string_view lookup = pre.empty() ? std::string_view("default") : pre;
    for (const Spec& s : specs()) {
        for (const char* name : s.names) {
            if (lookup == name) chosen = &s;
        }
    }
    if (pre.empty()) {
        warn_once("<empty>", file_name + ": no tokenizer.ggml.pre; using llama.cpp's 'default' "
                                         "pre-tokenizer (tokens may differ from the original)");
    }
    static const Spec fallback{{}, {kGpt2}, false};
    if (!chosen) {
        warn_once(std::string(pre), file_name + ": unknown BPE pre-tokenizer '" + std::string(pre) +
                                        "'; falling back to the GPT-2 regex (tokens may differ "
                                        "from the original tokenizer)");
        chosen = &fallback;
    }
    ignore_merges_ = chosen->ignore_merges;
    for (const char* pattern : chosen->regexes) {
        int err = 0;
        PCRE2_SIZE err_off = 0;
        auto c = std::make_unique<Compiled>();
        c->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &err, &err_off,
                                nullptr);
        if (!c->code) {
            fail("pre-tokenizer regex failed to compile at " + std::to_string(err_off) + ": " +
                 pcre2_message(err));
        }
        pcre2_jit_compile(c->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter on failure
        regexes_.push_back(std::move(c));
        patterns_.emplace_back(pattern);
    }
}

PreTokenizer::~PreTokenizer() = default;

namespace {

// PCRE2 matching state (match data, a JIT stack large enough for long whitespace runs).
struct MatchState {
    pcre2_match_data* md = nullptr;
    pcre2_match_context* ctx = nullptr;
    pcre2_jit_stack* stack = nullptr;
    MatchState() {
        md = pcre2_match_data_create(4, nullptr);
        ctx = pcre2_match_context_create(nullptr);
        stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
        if (!md || !ctx || !stack) fail("pre-tokenizer: out of memory");
        pcre2_jit_stack_assign(ctx, nullptr, stack);
    }
    ~MatchState() {
        pcre2_jit_stack_free(stack);
        pcre2_match_context_free(ctx);
        pcre2_match_data_free(md);
    }
    MatchState(const MatchState&) = delete;
    MatchState& operator=(const MatchState&) = delete;
};

void split_one(pcre2_code* code, std::string_view frag, MatchState& st,
               std::vector<std::string_view>& out) {
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(frag.data());
    const std::size_t len = frag.size();
    std::size_t start = 0, last = 0;
    while (start < len) {
        const int rc = pcre2_match(code, subject, len, start, 0, st.md, st.ctx);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) fail("pre-tokenizer regex match failed: " + pcre2_message(rc));
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.md);
        const std::size_t s = ov[0], e = ov[1];
        if (e <= s) {  // empty match: move on by one character
            start = s + 1;
            while (start < len && (static_cast<unsigned char>(frag[start]) & 0xC0) == 0x80) ++start;
            continue;
        }
        if (s > last) out.push_back(frag.substr(last, s - last));
        out.push_back(frag.substr(s, e - s));
        last = start = e;
    }
    if (last < len) out.push_back(frag.substr(last));
}

}  // namespace

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& words) const {
    if (text.empty()) return;
    // One match state per thread, reused across calls (it does not depend on the pattern).
    thread_local MatchState st;
    if (regexes_.size() == 1) {
        split_one(regexes_[0]->code, text, st, words);
        return;
    }
    std::vector<std::string_view> cur{text}, next;
    for (const auto& re : regexes_) {
        next.clear();
        for (const std::string_view frag : cur) split_one(re->code, frag, st, next);
        cur.swap(next);
    }
    words.insert(words.end(), cur.begin(), cur.end());
}

}  // namespace ember::tokenizer

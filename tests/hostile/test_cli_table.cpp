// Every tool against hostile command lines (issue #16): a directory, /dev/zero or a FIFO where a
// file is expected, device files and FIFOs as output targets, huge, negative, NaN and infinite
// values, escape sequences and NUL/0xFF bytes in model metadata. Each case must end with exit
// code 1 (a file or resource problem) or 2 (a bad flag) and exactly one printable stderr line
// naming what was wrong, within the time limit and (outside sanitizer builds) under a 300 MiB
// address-space limit (ulimit -v). Output targets that are not regular files stay untouched.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sys/stat.h>

#include "hostile/fixtures.hpp"
#include "hostile/process.hpp"
#include "support/shared_data.hpp"

namespace {

using ember_test::hostile;

constexpr std::uint64_t kAddressLimit = std::uint64_t{300} << 20;
constexpr double kTimeLimit = ember_test::kSanitized ? 120.0 : 20.0;  // kill after
constexpr double kExpectedSeconds = ember_test::kSanitized ? 60.0 : 5.0;  // asserted (issue: ~1 s)

enum Flags : unsigned {
    kNone = 0,
    kNeedsLimit = 1,  ///< Only an error under the address-space limit (skipped in sanitizer builds).
    kStdinZero = 2,   ///< stdin is /dev/zero.
    kNeedsNode = 4,   ///< Needs the mknod character device (root).
};

struct Case {
    std::string tool;
    std::vector<std::string> args;
    int code;                          ///< 1 or 2
    std::vector<std::string> needles;  ///< each must appear in the stderr line (after expansion)
    unsigned flags = kNone;
};

// clang-format off
const std::vector<Case> kCases = {
    // ---- ember-chat ----
    {"ember-chat", {"-m", "{dir}", "-p", "hi"}, 1, {"{dir}", "directory"}},
    {"ember-chat", {"-m", "/dev/zero", "-p", "hi"}, 1, {"/dev/zero", "not a regular file"}},
    {"ember-chat", {"-m", "{fifo}", "-p", "hi"}, 1, {"{fifo}"}},
    {"ember-chat", {"-m", "{missing}", "-p", "hi"}, 1, {"{missing}"}},
    {"ember-chat", {"-m", "{evil_arch}", "-p", "hi"}, 1, {"{evil_arch}", "\\x1b[31mllama\\x00tail\\xff"}},
    {"ember-chat", {"-m", "{evil_rope}", "-p", "hi"}, 1, {"{evil_rope}", "rope.scaling.type"}},
    {"ember-chat", {"-m", "{evil_template}", "-p", "hi", "-n", "2"}, 1, {"{evil_template}", "\\x1b[2Jgone"}},
    {"ember-chat", {"-m", "{model}", "-f", "{dir}"}, 1, {"{dir}", "directory"}},
    {"ember-chat", {"-m", "{model}", "-f", "/dev/zero"}, 1, {"/dev/zero", "character device"}},
    {"ember-chat", {"-m", "{model}", "-f", "{fifo}"}, 1, {"{fifo}", "FIFO"}},
    {"ember-chat", {"-m", "{model}", "-f", "{missing}"}, 1, {"{missing}"}},
    {"ember-chat", {"-m", "{model}", "-f", "-", "-n", "1"}, 1, {"stdin", "64.0 MiB"}, kStdinZero},
    {"ember-chat", {"-m", "{model}", "--chat-template", "/dev/zero", "-p", "hi"}, 1, {"/dev/zero"}},
    {"ember-chat", {"-m", "{model}", "--chat-template", "{dir}", "-p", "hi"}, 1, {"{dir}"}},
    {"ember-chat", {"-m", "{model}", "--quiet"}, 1, {"stdin", "not text"}, kStdinZero},
    {"ember-chat", {"-m", "{model}", "--draft", "{dir}", "-p", "hi"}, 1, {"{dir}", "directory"}},
    {"ember-chat", {"-m", "{model}", "--draft", "/dev/zero", "-p", "hi"}, 1, {"/dev/zero"}},
    {"ember-chat", {"-m", "{model}", "--draft", "{evil_arch}", "-p", "hi"}, 1, {"{evil_arch}", "\\x1b[31m"}},
    {"ember-chat", {"-m", "{model}", "--draft", "{model}", "--draft-max", "1000000", "-p", "hi"}, 2, {"--draft-max", "[1, 64]"}},
    {"ember-chat", {"-m", "{model}", "--lookup", "nan", "-p", "hi"}, 2, {"--lookup", "nan"}},
    {"ember-chat", {"-m", "{model}", "--grammar", "/dev/zero", "-p", "hi"}, 1, {"/dev/zero", "character device"}},
    {"ember-chat", {"-m", "{model}", "--grammar", "{fifo}", "-p", "hi"}, 1, {"{fifo}", "FIFO"}},
    {"ember-chat", {"-m", "{model}", "--json-schema", "{dir}", "-p", "hi"}, 1, {"{dir}", "directory"}},
    {"ember-chat", {"-m", "{model}", "--json-schema", "{text}", "-p", "hi"}, 2, {"{text}", "JSON"}},
    {"ember-chat", {"-m", "{model}", "-c", "4000000", "-p", "hi"}, 2, {"-c", "4000000", "[0, 1048576]"}},
    {"ember-chat", {"-m", "{model}", "-c", "99999999", "-p", "hi"}, 2, {"-c", "99999999"}},
    {"ember-chat", {"-m", "{model}", "-c", "99999999999999999999999", "-p", "hi"}, 2, {"-c"}},
    {"ember-chat", {"-m", "{model}", "-c", "-5", "-p", "hi"}, 2, {"-c", "-5"}},
    {"ember-chat", {"-m", "{model}", "-c", "1048576", "-p", "hi"}, 1, {"context 1048576", "needs"}, kNeedsLimit},
    {"ember-chat", {"-m", "{model}", "-t", "1000000", "-p", "hi"}, 2, {"-t", "1000000", "[0, 1024]"}},
    {"ember-chat", {"-m", "{model}", "-t", "-1", "-p", "hi"}, 2, {"-t", "-1"}},
    {"ember-chat", {"-m", "{model}", "--kv-type", "\x1b[31m", "-p", "hi"}, 2, {"--kv-type", "not one of"}},
    {"ember-chat", {"-m", "{model}", "-t", "1000", "-p", "hi"}, 1, {"1000 threads"}, kNeedsLimit},
    {"ember-chat", {"-m", "{model}", "-n", "99999999999", "-p", "hi"}, 2, {"-n"}},
    {"ember-chat", {"-m", "{model}", "-n", "-2", "-p", "hi"}, 2, {"-n", "-2"}},
    {"ember-chat", {"-m", "{model}", "--repeat-last-n", "2000000000", "-p", "hi"}, 2, {"--repeat-last-n", "2000000000"}},
    {"ember-chat", {"-m", "{model}", "--repeat-last-n", "-1", "-p", "hi"}, 2, {"--repeat-last-n"}},
    {"ember-chat", {"-m", "{model}", "--temp", "-1", "-p", "hi"}, 2, {"--temp", "-1", "[0, 100]"}},
    {"ember-chat", {"-m", "{model}", "--temp", "inf", "-p", "hi"}, 2, {"--temp", "inf"}},
    {"ember-chat", {"-m", "{model}", "--temp", "nan", "-p", "hi"}, 2, {"--temp", "nan"}},
    {"ember-chat", {"-m", "{model}", "--temp", "1e999", "-p", "hi"}, 2, {"--temp", "1e999"}},
    {"ember-chat", {"-m", "{model}", "--top-p", "2", "-p", "hi"}, 2, {"--top-p", "2", "[0, 1]"}},
    {"ember-chat", {"-m", "{model}", "--top-p", "-0.5", "-p", "hi"}, 2, {"--top-p", "-0.5"}},
    {"ember-chat", {"-m", "{model}", "--top-k", "-3", "-p", "hi"}, 2, {"--top-k", "-3"}},
    {"ember-chat", {"-m", "{model}", "--min-p", "2", "-p", "hi"}, 2, {"--min-p", "2"}},
    {"ember-chat", {"-m", "{model}", "--typical", "nan", "-p", "hi"}, 2, {"--typical"}},
    {"ember-chat", {"-m", "{model}", "--repeat-penalty", "0", "-p", "hi"}, 2, {"--repeat-penalty", "(0, 100]"}},
    {"ember-chat", {"-m", "{model}", "--frequency-penalty", "-inf", "-p", "hi"}, 2, {"--frequency-penalty"}},
    {"ember-chat", {"-m", "{model}", "--presence-penalty", "1e9", "-p", "hi"}, 2, {"--presence-penalty"}},
    {"ember-chat", {"-m", "{model}", "--seed", "-1", "-p", "hi"}, 2, {"--seed", "-1"}},
    {"ember-chat", {"-m", "{model}", "--keep", "-1", "-p", "hi"}, 2, {"--keep"}},
    {"ember-chat", {"-m", "{model}", "--keep", "600", "-c", "512", "-p", "hi"}, 1, {"n_keep", "600"}},
    {"ember-chat", {"-m", "{model}", "--bogus"}, 2, {"--bogus"}},
    {"ember-chat", {"-m", "{model}", "-p"}, 2, {"-p"}},
    // ---- ember-tokenize ----
    {"ember-tokenize", {"-m", "{dir}", "-p", "hi"}, 1, {"{dir}", "directory"}},
    {"ember-tokenize", {"-m", "/dev/zero", "-p", "hi"}, 1, {"/dev/zero"}},
    {"ember-tokenize", {"-m", "{fifo}", "-p", "hi"}, 1, {"{fifo}"}},
    {"ember-tokenize", {"-m", "{evil_tokenizer}", "-p", "hi"}, 1, {"{evil_tokenizer}", "\\x1b]0;pwned\\x07"}},
    {"ember-tokenize", {"-m", "{model}", "-f", "{dir}"}, 1, {"{dir}", "directory"}},
    {"ember-tokenize", {"-m", "{model}", "-f", "/dev/zero"}, 1, {"/dev/zero"}},
    {"ember-tokenize", {"-m", "{model}", "-f", "{fifo}"}, 1, {"{fifo}", "FIFO"}},
    {"ember-tokenize", {"-m", "{model}", "-f", "-"}, 1, {"stdin", "64.0 MiB"}, kStdinZero},
    {"ember-tokenize", {"-m", "{model}"}, 2, {"-p TEXT or -f FILE"}},
    {"ember-tokenize", {"-m", "{model}", "-p", "hi", "--bogus"}, 2, {"--bogus"}},
    // ---- ember-template ----
    {"ember-template", {"--template", "{dir}", "--messages", "{messages}"}, 1, {"{dir}", "directory"}},
    {"ember-template", {"--template", "/dev/zero", "--messages", "{messages}"}, 1, {"/dev/zero"}},
    {"ember-template", {"--template", "{fifo}", "--messages", "{messages}"}, 1, {"{fifo}"}},
    {"ember-template", {"--template", "{template}", "--messages", "/dev/zero"}, 1, {"/dev/zero"}},
    {"ember-template", {"--template", "{template}", "--messages", "{bad_json}"}, 1, {"{bad_json}", "\\xff"}},
    {"ember-template", {"--template", "{template}", "--messages", "{messages}", "--vars", "{dir}"}, 1, {"{dir}"}},
    {"ember-template", {"--template", "{evil_template_file}", "--messages", "{messages}"}, 1, {"\\x1b[2J\\x1b]0;pwned\\x07"}},
    {"ember-template", {"--template", "{template}"}, 2, {"--messages"}},
    // ---- ember-perplexity ----
    {"ember-perplexity", {"-m", "{model}", "-f", "{dir}"}, 1, {"{dir}", "directory"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "/dev/zero"}, 1, {"/dev/zero"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{fifo}"}, 1, {"{fifo}"}},
    {"ember-perplexity", {"-m", "{dir}", "-f", "{text}"}, 1, {"{dir}"}},
    {"ember-perplexity", {"-m", "{evil_arch}", "-f", "{text}"}, 1, {"{evil_arch}", "\\x1b[31m"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{text}", "-b", "0"}, 2, {"-b", "0"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{text}", "-c", "99999999"}, 2, {"-c", "99999999"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{text}", "-c", "3"}, 2, {"-c", "[4, 1048576]"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{text}", "-t", "1000000"}, 2, {"-t"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{text}", "--kv-type", "q4_0"}, 2, {"--kv-type", "q4_0"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{text}", "-c", "16"}, 1, {"{text}", "needs at least"}},
    {"ember-perplexity", {"-m", "{model}", "--kl-divergence", "--kl-divergence-base", "{dir}"}, 1, {"{dir}", "not a regular file"}},
    {"ember-perplexity", {"-m", "{model}", "--kl-divergence", "--kl-divergence-base", "{text}"}, 1, {"{text}"}},
    {"ember-perplexity", {"-m", "{model}", "--kl-divergence", "--kl-divergence-base", "{text}", "-f", "{text}"}, 2, {"not -f"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{text}", "--kl-divergence-base", "{fifo_out}"}, 1, {"{fifo_out}", "FIFO"}},
    {"ember-perplexity", {"-m", "{model}", "-f", "{text}", "--kl-divergence-base", "{dev_link}"}, 1, {"{dev_link}", "character device"}},
    // ---- ember-bench ----
    {"ember-bench", {"-m", "{model}", "-p", "99999999"}, 2, {"-p", "99999999"}},
    {"ember-bench", {"-m", "{model}", "-n", "-1"}, 2, {"-n", "-1"}},
    {"ember-bench", {"-m", "{model}", "-d", "-1"}, 2, {"-d", "-1"}},
    {"ember-bench", {"-m", "{model}", "-d", "99999999"}, 2, {"-d", "99999999"}},
    {"ember-bench", {"-m", "{model}", "--bw-mib", "-5"}, 2, {"--bw-mib", "-5"}},
    {"ember-bench", {"-m", "{model}", "-t", "1000000"}, 2, {"-t"}},
    {"ember-bench", {"-m", "{model}", "-r", "0"}, 2, {"-r"}},
    {"ember-bench", {"-m", "{model}", "-o", "xml"}, 2, {"-o", "xml"}},
    {"ember-bench", {"-m", "{dir}"}, 1, {"{dir}"}},
    {"ember-bench", {"-m", "/dev/zero"}, 1, {"/dev/zero"}},
    {"ember-bench", {"-m", "{evil_arch}"}, 1, {"{evil_arch}", "\\x1b[31m"}},
    {"ember-bench", {"-m", "{model}", "-p", "1048576", "-n", "0", "--no-limits"}, 1, {"needs"}, kNeedsLimit},
    {"ember-bench", {"-m", "{model}", "-p", "0", "-n", "0", "--bw-mib", "65536"}, 1, {"--bw-mib", "needs"}, kNeedsLimit},
    // ---- ember-server (--port 0: any free port; the model loads after the listener starts) ----
    {"ember-server", {"-m", "{dir}", "--port", "0"}, 1, {"{dir}", "directory"}},
    {"ember-server", {"-m", "/dev/zero", "--port", "0"}, 1, {"/dev/zero"}},
    {"ember-server", {"-m", "{missing}", "--port", "0"}, 1, {"{missing}"}},
    {"ember-server", {"-m", "{evil_arch}", "--port", "0"}, 1, {"{evil_arch}", "\\x1b[31m"}},
    {"ember-server", {"-m", "{model}", "--chat-template", "/dev/zero"}, 1, {"/dev/zero"}},
    {"ember-server", {"-m", "{model}", "--chat-template", "{dir}"}, 1, {"{dir}"}},
    {"ember-server", {"-m", "{model}", "--port", "65536"}, 2, {"--port", "[0, 65535]"}},
    {"ember-server", {"-m", "{model}", "--parallel", "0"}, 2, {"--parallel", "[1, 256]"}},
    {"ember-server", {"-m", "{model}", "--max-body", "99999999999999999999"}, 2, {"--max-body"}},
    {"ember-server", {"-m", "{model}", "-t", "-1"}, 2, {"-t", "-1"}},
    {"ember-server", {"-m", "{model}", "--kv-type", ""}, 2, {"--kv-type"}},
    {"ember-server", {"-m", "{model}", "--kv-tokens", "0"}, 2, {"--kv-tokens", "[1, 1073741824]"}},
    {"ember-server", {"-m", "{model}", "--kv-tokens", "99999999999"}, 2, {"--kv-tokens"}},
    {"ember-server", {"-m", "{model}", "--api-key", ""}, 2, {"--api-key"}},
    {"ember-server", {"--port", "0"}, 2, {"-m MODEL"}},
    {"ember-server", {"-m", "{model}", "--bogus"}, 2, {"--bogus"}},
    // ---- ember-batch ----
    {"ember-batch", {"-m", "{dir}", "-f", "{text}"}, 1, {"{dir}", "directory"}},
    {"ember-batch", {"-m", "/dev/zero", "-f", "{text}"}, 1, {"/dev/zero"}},
    {"ember-batch", {"-m", "{evil_arch}", "-f", "{text}"}, 1, {"{evil_arch}", "\\x1b[31m"}},
    {"ember-batch", {"-m", "{model}", "-f", "{dir}"}, 1, {"{dir}", "directory"}},
    {"ember-batch", {"-m", "{model}", "-f", "/dev/zero"}, 1, {"/dev/zero", "character device"}},
    {"ember-batch", {"-m", "{model}", "-f", "{fifo}"}, 1, {"{fifo}", "FIFO"}},
    {"ember-batch", {"-m", "{model}", "-f", "{missing}"}, 1, {"{missing}"}},
    {"ember-batch", {"-m", "{model}", "-f", "-"}, 1, {"stdin", "64.0 MiB"}, kStdinZero},
    {"ember-batch", {"-m", "{model}", "-f", "{text}", "--parallel", "0"}, 2, {"--parallel", "[1, 1024]"}},
    {"ember-batch", {"-m", "{model}", "-f", "{text}", "--parallel", "99999999999999999999"}, 2, {"--parallel"}},
    {"ember-batch", {"-m", "{model}", "-f", "{text}", "-n", "-2"}, 2, {"-n", "-2"}},
    {"ember-batch", {"-m", "{model}", "-f", "{text}", "-c", "99999999"}, 2, {"-c", "99999999"}},
    {"ember-batch", {"-m", "{model}", "-f", "{text}", "-t", "-1"}, 2, {"-t", "-1"}},
    {"ember-batch", {"-m", "{model}", "-f", "{text}", "--temp", "nan"}, 2, {"--temp", "nan"}},
    {"ember-batch", {"-m", "{model}", "-f", "{text}", "--seed", "-1"}, 2, {"--seed"}},
    {"ember-batch", {"-m", "{model}"}, 2, {"-f PROMPTS"}},
    {"ember-batch", {"-m", "{model}", "-f", "{text}", "--bogus"}, 2, {"--bogus"}},
    // ---- ember-quantize ----
    {"ember-quantize", {"{dir}", "{out}", "Q8_0"}, 1, {"{dir}"}},
    {"ember-quantize", {"/dev/zero", "{out}", "Q8_0"}, 1, {"/dev/zero"}},
    {"ember-quantize", {"{fifo}", "{out}", "Q8_0"}, 1, {"{fifo}"}},
    {"ember-quantize", {"{evil_arch}", "{out}", "Q8_0"}, 1, {"{evil_arch}", "\\x1b[31m"}},
    {"ember-quantize", {"{model}", "{fifo_out}", "Q8_0"}, 1, {"{fifo_out}", "FIFO"}},
    {"ember-quantize", {"{model}", "{dev_link}", "Q8_0"}, 1, {"{dev_link}", "character device"}},
    {"ember-quantize", {"{model}", "{dev_node}", "Q8_0"}, 1, {"{dev_node}", "character device"}, kNeedsNode},
    {"ember-quantize", {"{model}", "{dir}", "Q8_0"}, 1, {"{dir}", "directory"}},
    {"ember-quantize", {"{model}", "{out}", "Q3_X"}, 2, {"Q3_X"}},
    {"ember-quantize", {"{model}", "{out}", "Q8_0", "-t", "1000000"}, 2, {"-t"}},
    {"ember-quantize", {"{model}", "{out}"}, 2, {"TYPE"}},
    // ---- ember-generate-model ----
    {"ember-generate-model", {"-o", "{fifo_out}", "--quiet"}, 1, {"{fifo_out}", "FIFO"}},
    {"ember-generate-model", {"-o", "{dev_link}", "--quiet"}, 1, {"{dev_link}", "character device"}},
    {"ember-generate-model", {"-o", "{dev_node}", "--quiet"}, 1, {"{dev_node}"}, kNeedsNode},
    {"ember-generate-model", {"-o", "{dir}", "--quiet"}, 1, {"{dir}", "directory"}},
    {"ember-generate-model", {"-o", "{out}", "--n-embd", "2000000000"}, 2, {"--n-embd", "2000000000"}},
    {"ember-generate-model", {"-o", "{out}", "--n-embd", "-5"}, 2, {"--n-embd", "-5"}},
    {"ember-generate-model", {"-o", "{out}", "--n-vocab", "99999999999"}, 2, {"--n-vocab"}},
    {"ember-generate-model", {"-o", "{out}", "--std", "nan"}, 2, {"--std", "nan"}},
    {"ember-generate-model", {"-o", "{out}", "--std", "-1"}, 2, {"--std", "-1"}},
    {"ember-generate-model", {"-o", "{out}", "-t", "1000000"}, 2, {"-t"}},
    {"ember-generate-model", {"-o", "{out}", "--preset", "huge"}, 2, {"--preset", "huge"}},
    {"ember-generate-model", {"-o", "{out}", "--vocab-from", "/dev/zero", "--quiet"}, 1, {"/dev/zero"}},
    {"ember-generate-model", {"-o", "{out}", "--n-embd", "65536", "--n-vocab", "4194304", "--quiet"}, 1, {"{out}", "needs"}},
    {"ember-generate-model", {"--quiet"}, 2, {"-o"}},
};
// clang-format on

std::string show(const std::vector<std::string>& args) {
    std::string s;
    for (const auto& a : args) s += " " + a;
    return s;
}

// The kind of file at `path`, to check that a tool left a non-regular target alone.
mode_t kind(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

}  // namespace

TEST_CASE("every tool: hostile inputs give one printable error line, exit 1 or 2, bounded time and memory",
          "[cli][hostile]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto& h = hostile();
    const mode_t fifo_kind = kind(h.fifo_out), link_kind = kind(h.dev_link), dir_kind = kind(h.subdir);
    double slowest = 0.0;
    std::uint64_t biggest = 0;
    int run = 0;
    for (const Case& c : kCases) {
        if ((c.flags & kNeedsLimit) && ember_test::kSanitized) continue;
        if ((c.flags & kNeedsNode) && h.dev_node.empty()) continue;
        std::vector<std::string> argv = {ember_test::program(c.tool)};
        for (const auto& a : c.args) argv.push_back(h.expand(a));
        ember_test::RunOptions o;
        o.timeout_seconds = kTimeLimit;
        o.address_limit = ember_test::kSanitized ? 0 : kAddressLimit;
        if (c.flags & kStdinZero) o.stdin_path = "/dev/zero";
        const auto r = ember_test::run_process(argv, o);
        ++run;
        INFO(c.tool << show(argv).substr(argv[0].size() + 1) << "\n  -> " << r.describe() << "\n  stderr: " << r.err);
        CHECK(r.exit_code == c.code);
        CHECK(ember_test::is_one_printable_line(r.err));
        CHECK(r.err.rfind(c.tool + ": error: ", 0) == 0);
        for (const auto& needle : c.needles) CHECK(r.err.find(h.expand(needle)) != std::string::npos);
        CHECK(r.seconds < kExpectedSeconds);
        if (!ember_test::kSanitized) CHECK(r.max_rss_bytes < kAddressLimit);
        // Non-regular targets are never replaced, and nothing is left behind.
        CHECK(kind(h.fifo_out) == fifo_kind);
        CHECK(kind(h.dev_link) == link_kind);
        CHECK(kind(h.subdir) == dir_kind);
        if (!h.dev_node.empty()) CHECK(kind(h.dev_node) == S_IFCHR);
        CHECK(h.leftovers().empty());
        slowest = std::max(slowest, r.seconds);
        biggest = std::max(biggest, r.max_rss_bytes);
    }
    WARN(run << " hostile command lines; slowest " << slowest << " s, largest RSS "
             << static_cast<double>(biggest) / (1 << 20) << " MiB");
}

TEST_CASE("every installed tool has rows in the hostile-input table", "[cli][hostile]") {
    std::set<std::string> covered;
    for (const Case& c : kCases) covered.insert(c.tool);
    const auto bin = std::filesystem::path(EMBER_BINARY_DIR) / "bin";
    for (const auto& e : std::filesystem::directory_iterator(bin)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("ember-", 0) != 0 || name.find("-example") != std::string::npos) continue;
        INFO(name << " has no rows in kCases (tests/hostile/test_cli_table.cpp): add its hostile inputs");
        CHECK(covered.count(name) == 1);
    }
}

TEST_CASE("tool output: bytes from files are escaped on the terminal and in JSON", "[cli][hostile]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto& h = hostile();
    ember_test::RunOptions o;
    o.timeout_seconds = kTimeLimit;
    // Token pieces: ESC, a raw 0xFF (U+FFFD after the tokenizer's UTF-8 repair) and a newline.
    const auto tok = ember_test::run_process(
        {ember_test::program("ember-tokenize"), "-m", h.model, "-p", "a\x1b[2Jb\xff\nc"}, o);
    INFO(tok.describe() << "\n" << tok.out << tok.err);
    CHECK(tok.exit_code == 0);
    CHECK(tok.out.find('\x1b') == std::string::npos);
    CHECK(tok.out.find("'\\x1b'") != std::string::npos);
    CHECK(tok.out.find("'\\x0a'") != std::string::npos);
    // A model file whose name has ESC and 0xFF bytes, in every ember-bench format.
    const auto evil_name = h.dir / "m\x1b[31m\xff.gguf";
    std::filesystem::copy_file(h.model, evil_name);
    for (const std::string format : {"json", "md", "csv"}) {
        const auto r = ember_test::run_process({ember_test::program("ember-bench"), "-m", evil_name.string(), "-p", "4",
                                                "-n", "2", "-r", "1", "-t", "1", "--no-limits", "-o", format},
                                               o);
        INFO(format << ": " << r.describe() << "\n" << r.out << r.err);
        CHECK(r.exit_code == 0);
        // Shown as \x1b and \xff (in JSON the backslashes are escaped once more).
        const std::string shown = format == "json" ? "m\\\\x1b[31m\\\\xff.gguf" : "m\\x1b[31m\\xff.gguf";
        CHECK(r.out.find(shown) != std::string::npos);
        CHECK(r.out.find('\x1b') == std::string::npos);
        CHECK(r.out.find('\xff') == std::string::npos);
        CHECK(r.err.find('\x1b') == std::string::npos);
    }
    std::filesystem::remove(evil_name);
}

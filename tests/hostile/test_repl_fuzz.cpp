// The ember-chat REPL against hostile commands: /load and /save of directories, /dev/zero,
// FIFOs, device files, missing files and names with escape or NUL bytes, over-long lines, and
// a seeded stream of random commands and arguments. Each bad command is reported on one
// printable stderr line and the REPL goes on (it answers afterwards and exits 0 on /exit).
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <sstream>

#include "hostile/fixtures.hpp"
#include "hostile/process.hpp"
#include "support/shared_data.hpp"

namespace {

using ember_test::hostile;

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    for (std::size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1) {
        lines.push_back(s.substr(start, nl - start + 1));
    }
    if (start < s.size()) lines.push_back(s.substr(start));
    return lines;
}

std::size_t count(const std::string& s, const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
    return n;
}

// Relative names the fuzzer makes up land in `work_dir`.
ember_test::RunResult run_repl(const std::string& input, const std::string& work_dir) {
    ember_test::RunOptions o;
    o.stdin_data = input;
    o.working_dir = work_dir;
    o.timeout_seconds = ember_test::kSanitized ? 300.0 : 60.0;
    o.address_limit = ember_test::kSanitized ? 0 : std::uint64_t{300} << 20;
    return ember_test::run_process({ember_test::program("ember-chat"), "-m", hostile().model, "-n", "4", "--temp",
                                    "0", "-t", "1", "--quiet", "-c", "64"},
                                   o);
}

}  // namespace

TEST_CASE("ember-chat REPL: each hostile command is one error line and the REPL goes on", "[cli][hostile][repl]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto& h = hostile();
    const std::string saved = (h.dir / "repl_saved.bin").string();
    // Each of these must give exactly one error line.
    const std::vector<std::string> bad = {
        "/load " + h.subdir,
        "/load /dev/zero",
        "/load " + h.fifo,
        "/load " + h.missing,
        "/load " + h.evil_arch,
        "/load " + h.text,
        "/load",
        "/save",
        "/save " + h.subdir,
        "/save " + h.fifo_out,
        "/save " + h.dev_link,
        "/save " + h.missing + "/deeper/file",
        "/load \x1b[31mred\xff",
        std::string("/load ") + h.text + std::string("\0tail", 5),
        "/bogus \x1b]0;title\x07",
        std::string(2u << 20, 'x'),  // a line over the 1 MiB limit
    };
    std::string input;
    for (const auto& b : bad) input += b + "\n";
    input += "Once upon a time\n/save " + saved + "\n/load " + saved + "\n/stats\n/exit\n";
    const auto r = run_repl(input, h.dir.string());
    INFO(r.describe() << "\nstderr:\n" << r.err.substr(0, 4000));
    CHECK(r.exit_code == 0);
    const auto err_lines = lines_of(r.err);
    for (const auto& line : err_lines) CHECK(ember_test::is_one_printable_line(line));
    CHECK(count(r.err, "ember-chat: error: ") == bad.size());
    CHECK(r.err.find("[saved to " + saved + "]") != std::string::npos);
    CHECK(r.err.find("[loaded " + saved + "]") != std::string::npos);
    CHECK(r.out.find("context ") != std::string::npos);  // /stats ran after everything else
    CHECK(r.err.find("\\x1b[31mred\\xff") != std::string::npos);
    CHECK(std::filesystem::is_fifo(h.fifo_out));
    CHECK(std::filesystem::is_symlink(h.dev_link));
    std::filesystem::remove(saved);
    CHECK(h.leftovers().empty());
}

TEST_CASE("ember-chat REPL: a seeded stream of random commands never stops it", "[cli][hostile][repl]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    const auto& h = hostile();
    const auto fuzz_dir = h.dir / "fuzz";
    std::filesystem::create_directories(fuzz_dir);
    std::mt19937 rng(20250216);
    const std::vector<std::string> commands = {"/load", "/save", "/reset", "/stats", "/help", "/bogus", "/load ", "/save  "};
    const std::vector<std::string> paths = {h.subdir, "/dev/zero", h.fifo, h.fifo_out, h.dev_link, h.missing,
                                            h.text, h.evil_arch, h.bad_json, "/", "/proc/self/mem", ""};
    auto random_bytes = [&](std::size_t n) {
        std::string s;
        std::uniform_int_distribution<int> byte(1, 255);
        while (s.size() < n) {
            const char c = static_cast<char>(byte(rng));
            if (c != '\n' && c != '/') s += c;
        }
        return s;
    };
    std::string input;
    int n_lines = 0;
    for (int i = 0; i < 150; ++i, ++n_lines) {
        const int kind = static_cast<int>(rng() % 10);
        if (kind == 0) {
            input += random_bytes(1 + rng() % 40) + "\n";  // a user message of random bytes
            continue;
        }
        input += commands[rng() % commands.size()];
        input += ' ';
        if (kind < 5) input += paths[rng() % paths.size()];
        else if (kind < 8) input += (fuzz_dir / random_bytes(1 + rng() % 30)).string();
        else input += random_bytes(rng() % 3000);
        input += '\n';
    }
    input += "/stats\n/exit\n";
    const auto r = run_repl(input, fuzz_dir.string());
    INFO(r.describe() << "\nstderr:\n" << r.err.substr(0, 4000));
    CHECK(r.exit_code == 0);
    for (const auto& line : lines_of(r.err)) CHECK(ember_test::is_one_printable_line(line));
    CHECK(count(r.out, "context ") >= 1);
    CHECK(std::filesystem::is_fifo(h.fifo_out));
    CHECK(std::filesystem::is_symlink(h.dev_link));
    std::filesystem::remove_all(fuzz_dir);
    CHECK(h.leftovers().empty());
    WARN(n_lines << " random REPL lines in " << r.seconds << " s");
}

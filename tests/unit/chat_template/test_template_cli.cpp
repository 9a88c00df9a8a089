// ember-template end to end: exact output, --date, exit codes. Where the tool is not built
// (EMBER_BUILD_TOOLS=OFF) the test is skipped with a warning; in CI (CI=true) that is a failure.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "support/shared_data.hpp"

namespace {

namespace fs = std::filesystem;

fs::path tool_path() { return fs::path(EMBER_BINARY_DIR) / "bin" / "ember-template"; }

void write_file(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct Result {
    int status;
    std::string out;
    std::string err;
};

std::string quote(const std::string& s) {
    std::string q(1, '\'');
    q += s;
    q += '\'';
    return q;
}

Result run(const std::string& args, const fs::path& dir) {
    std::string cmd = quote(tool_path().string());
    cmd += " " + args + " >" + quote((dir / "out").string()) + " 2>" + quote((dir / "err").string());
    int raw = std::system(cmd.c_str());
    int status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return {status, read_file(dir / "out"), read_file(dir / "err")};
}

}  // namespace

TEST_CASE("ember-template: renders exactly and reports errors with exit codes", "[chat_template][cli]") {
    if (!fs::exists(tool_path())) {
        if (ember_test::in_ci()) FAIL(tool_path() << " is not built (CI builds the tools in every configuration)");
        WARN("SKIPPED: " << tool_path() << " is not built");
        return;
    }
    fs::path dir = fs::temp_directory_path() / ("ember_template_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    write_file(dir / "t.jinja",
               "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}"
               "{% if add_generation_prompt %}[assistant]{% endif %}{{ strftime_now('%d') }}{{ eos_token }}\n");
    write_file(dir / "m.json", R"([{"role": "user", "content": "Héllo"}])");
    write_file(dir / "bad.jinja", "{% if x %}");
    write_file(dir / "raise.jinja", "{{ raise_exception('no system role') }}");

    Result ok = run("--template " + quote((dir / "t.jinja").string()) + " --messages " + quote((dir / "m.json").string()) +
                        " --bos '<s>' --eos '</s>' --add-generation-prompt --date 'D'",
                    dir);
    CHECK(ok.status == 0);
    CHECK(ok.out == "<s>[user] Héllo\n[assistant]D</s>");
    CHECK(ok.err.empty());

    Result bad = run("--template " + quote((dir / "bad.jinja").string()) + " --messages " + quote((dir / "m.json").string()), dir);
    CHECK(bad.status == 1);
    CHECK(bad.out.empty());
    CHECK(bad.err == "ember-template: error: " + (dir / "bad.jinja").string() +
                         ": chat template: line 1, column 11: unexpected end of template, expected "
                         "'elif' or 'else' or 'endif'\n");

    Result raised = run("--template " + quote((dir / "raise.jinja").string()) + " --messages " + quote((dir / "m.json").string()), dir);
    CHECK(raised.status == 1);
    CHECK(raised.err == "ember-template: error: " + (dir / "raise.jinja").string() + ": no system role\n");

    Result usage = run("--template " + quote((dir / "t.jinja").string()), dir);
    CHECK(usage.status == 2);
    CHECK(std::count(usage.err.begin(), usage.err.end(), '\n') == 1);

    Result missing = run("--template " + quote((dir / "nope.jinja").string()) + " --messages " + quote((dir / "m.json").string()), dir);
    CHECK(missing.status == 1);  // a file that cannot be used (2 is for a bad command line)

    write_file(dir / "badjson.json", "[{\"role\": }]");
    Result badjson = run("--template " + quote((dir / "t.jinja").string()) + " --messages " + quote((dir / "badjson.json").string()), dir);
    CHECK(badjson.status == 1);
    CHECK(badjson.err.find("JSON: line 1, column 11") != std::string::npos);

    fs::remove_all(dir);
}

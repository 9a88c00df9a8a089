// Every case of ../shared/chat-templates/*.cases.json renders exactly (or raises the same error).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "chat/chat_template.hpp"
#include "chat/json.hpp"
#include "support/shared_data.hpp"

namespace {

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST_CASE("chat templates: shared Hugging Face template cases", "[chat_template][shared]") {
    EMBER_REQUIRE_SHARED("chat-templates/README.md");
    namespace fs = std::filesystem;
    int n_files = 0, n_cases = 0, n_passed = 0;
    for (const auto& entry : fs::directory_iterator(ember_test::shared_file("chat-templates"))) {
        std::string file = entry.path().filename().string();
        if (file.size() < 11 || file.substr(file.size() - 11) != ".cases.json") continue;
        ++n_files;
        ember::json::Value spec = ember::json::parse(slurp(entry.path()));
        const std::string template_file = spec.at("template").get<std::string>();
        ember::chat::ChatTemplate tpl(slurp(entry.path().parent_path() / template_file));
        int passed = 0, total = 0;
        for (const auto& c : spec.at("cases")) {
            ember::chat::ChatTemplateInput input;
            input.messages = c.at("messages");
            input.add_generation_prompt = c.at("add_generation_prompt").get<bool>();
            input.bos_token = spec.at("bos_token").get<std::string>();
            input.eos_token = spec.at("eos_token").get<std::string>();
            input.fixed_date = "26 Jul 2024";
            INFO(template_file << " case " << c.at("name").get<std::string>());
            ++total;
            if (c.contains("expected")) {
                const std::string expected = c.at("expected").get<std::string>();
                std::string out;
                try {
                    out = tpl.render(input);
                } catch (const ember::Error& e) {
                    FAIL_CHECK("threw: " << e.what());
                    continue;
                }
                CHECK(out == expected);
                passed += out == expected;
            } else {
                std::string message = "<no error>";
                try {
                    tpl.render(input);
                } catch (const ember::Error& e) {
                    message = e.what();
                }
                CHECK(message == c.at("error").get<std::string>());
                passed += message == c.at("error").get<std::string>();
            }
        }
        WARN(template_file << ": " << passed << "/" << total);
        n_cases += total;
        n_passed += passed;
    }
    REQUIRE(n_files >= 9);
    CHECK(n_passed == n_cases);
}

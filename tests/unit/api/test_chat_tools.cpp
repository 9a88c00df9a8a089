// Chat messages with tool calls, tool results, a tools list and template variables, through the
// public types (ember::ChatMessage, ChatTemplateOptions): rendered as transformers renders the
// same conversation (references made by tests/data/chat-tools/render_reference.py with jinja2).
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/chat_messages.hpp"
#include "ember/ember.hpp"
#include "support/shared_data.hpp"

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

const char* const kTools =
    R"([{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city", )"
    R"("parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}, )"
    R"("unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}}])";

// The conversation of render_reference.py's ROUND, as an application builds it.
std::vector<ember::ChatMessage> tool_round() {
    return {
        {.role = "system", .content = "You are a helpful assistant."},
        {.role = "user", .content = "What is the weather in Paris?"},
        {.role = "assistant",
         .tool_calls = {{.id = "abcDEF123", .name = "get_weather",
                         .arguments = R"({"city": "Paris", "unit": "celsius"})"}}},
        {.role = "tool", .content = R"({"temperature": 18, "sky": "cloudy"})",
         .tool_call_id = "abcDEF123", .name = "get_weather"},
    };
}

struct Case {
    const char* name;
    std::vector<ember::ChatMessage> messages;
    ember::ChatTemplateOptions options;
};

std::vector<Case> cases() {
    auto round = tool_round();
    return {
        {"tools", {round[0], round[1]}, {.tools = kTools}},
        {"tool_round", round, {.tools = kTools}},
        {"no_thinking", {{.role = "user", .content = "Hello!"}}, {.variables = R"({"enable_thinking": false})"}},
    };
}

struct Template {
    const char* name;
    const char* bos;
    const char* eos;
};

}  // namespace

TEST_CASE("chat tools: rendered as transformers renders them", "[api][chat]") {
    const Template templates[] = {
        {"Qwen-Qwen2.5-7B-Instruct", "", "<|im_end|>"},
        {"meta-llama-Llama-3.1-8B-Instruct", "<|begin_of_text|>", "<|eot_id|>"},
        {"mistralai-Mistral-Nemo-Instruct-2407", "<s>", "</s>"},
        {"ibm-granite-granite-3.3-2B-Instruct", "<|end_of_text|>", "<|end_of_text|>"},
        {"HuggingFaceTB-SmolLM3-3B", "", "<|im_end|>"},
    };
    const std::string references = std::string(EMBER_SOURCE_DIR) + "/tests/data/chat-tools/";
    int compared = 0;
    for (const Template& t : templates) {
        const std::string jinja = std::string("chat-templates/") + t.name + ".jinja";
        EMBER_REQUIRE_SHARED(jinja);
        const ember::chat::ChatTemplate tpl(read_text(ember_test::shared_file(jinja).string()));
        for (const Case& c : cases()) {
            INFO(t.name << " / " << c.name);
            ember::chat::ChatTemplateInput input = ember::detail::chat_template_input(c.messages, c.options);
            input.bos_token = t.bos;
            input.eos_token = t.eos;
            input.fixed_date = "26 Jul 2024";
            const std::string expected = read_text(references + t.name + "." + c.name + ".txt");
            REQUIRE_FALSE(expected.empty());
            CHECK(tpl.render(input) == expected);
            ++compared;
        }
    }
    CHECK(compared == 15);
}

TEST_CASE("chat tools: the public call with a model and a template override", "[api][chat]") {
    EMBER_REQUIRE_SHARED("models/stories260K.gguf");
    EMBER_REQUIRE_SHARED("chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja");
    const auto model = ember::Model::load(ember_test::shared_file("models/stories260K.gguf").string());
    // Qwen's template uses neither bos_token nor eos_token, so stories260K's do not matter.
    const std::string qwen =
        read_text(ember_test::shared_file("chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja").string());
    const std::string references = std::string(EMBER_SOURCE_DIR) + "/tests/data/chat-tools/Qwen-Qwen2.5-7B-Instruct.";
    for (Case& c : cases()) {
        c.options.template_override = qwen;
        CHECK(model.apply_chat_template(c.messages, c.options) == read_text(references + c.name + ".txt"));
    }

    // Arguments that are not JSON reach the template as a string.
    ember::ChatTemplateOptions raw{.template_override =
                                       "{{ messages[0].tool_calls[0].function.arguments | tojson }}"};
    const std::vector<ember::ChatMessage> odd = {
        {.role = "assistant", .tool_calls = {{.name = "f", .arguments = "not json"}}}};
    CHECK(model.apply_chat_template(odd, raw) == R"("not json")");
    // So do arguments whose number is past double's range (nlohmann's out_of_range once escaped).
    const std::vector<ember::ChatMessage> huge = {
        {.role = "assistant", .tool_calls = {{.name = "f", .arguments = R"({"x": 1e400})"}}}};
    CHECK(model.apply_chat_template(huge, raw) == R"("{\"x\": 1e400}")");

    // Bad tools or variables are errors naming the option.
    CHECK_THROWS_WITH(model.apply_chat_template(odd, {.tools = "{}"}), Catch::Contains("tools must be a JSON array"));
    CHECK_THROWS_WITH(model.apply_chat_template(odd, {.tools = "[1,"}), Catch::Contains("ChatTemplateOptions::tools"));
    CHECK_THROWS_WITH(model.apply_chat_template(odd, {.tools = "[1e400]"}), Catch::Contains("number overflow"));
    CHECK_THROWS_WITH(model.apply_chat_template(odd, {.variables = "[]"}),
                      Catch::Contains("variables must be a JSON object"));

    // The old call is the new one with defaults (ChatML for stories260K, no template of its own).
    const std::vector<ember::ChatMessage> hi = {{.role = "user", .content = "Hi"}};
    CHECK(model.apply_chat_template(hi) == model.apply_chat_template(hi, true));
    CHECK(model.apply_chat_template(hi, {.add_generation_prompt = false}) == "<|im_start|>user\nHi<|im_end|>\n");
}

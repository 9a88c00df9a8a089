// ember/tool_calls.hpp: tool (function) calls in a model's reply, as OpenAI's API returns them.
//
// Models that were trained to call tools write the calls as text in a format of their family;
// their chat template shows that format. These functions detect the format from the template,
// find the calls in a reply, and make a grammar that forces a reply to be calls (see
// docs/server.md, "Tools").
//
//   auto format = ember::detect_tool_call_format(model.chat_template());
//   ember::ParsedReply reply = ember::parse_tool_calls(text, format);
//   for (const ember::ToolCall& call : reply.tool_calls) run(call.name, call.arguments);
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ember/export.h"
#include "ember/model.hpp"

namespace ember {

/// How a model family writes tool calls.
enum class ToolCallFormat {
    /// `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>`, one block per call (Hermes,
    /// Qwen 2.5, Qwen3, SmolLM3). The default for templates that show no format.
    hermes,
    /// `{"name": ..., "parameters": {...}}` as the whole reply, optionally after `<|python_tag|>`;
    /// several calls separated by `;` (Llama 3.1, 3.2, 3.3).
    llama3,
    /// `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]` (Mistral Nemo, Small 3.0/3.1).
    mistral,
    /// `[TOOL_CALLS]name[ARGS]{...}`, repeated for several calls (Mistral Small 3.2, Magistral).
    mistral_args,
};

/// "hermes", "llama3", "mistral" or "mistral_args".
EMBER_API const char* tool_call_format_name(ToolCallFormat format) noexcept;

/// The format a chat template shows: `[TOOL_CALLS]` with `[ARGS]` is mistral_args,
/// `[TOOL_CALLS]` alone mistral, `<|python_tag|>` or the `ipython` role llama3, and anything
/// else (`<tool_call>`, or no tool markup at all) hermes.
EMBER_API ToolCallFormat detect_tool_call_format(std::string_view chat_template) noexcept;

/// A reply split into its text and its tool calls.
struct ParsedReply {
    /// The text outside the calls, trimmed of surrounding whitespace when there are calls; the
    /// whole reply, unchanged, when there are none.
    std::string content{};
    /// The calls in order. `arguments` is JSON text (OpenAI's `function.arguments`); `id` is new:
    /// "call_" and 24 letters and digits, or for the Mistral formats 9 letters and digits (their
    /// templates refuse other ids) unless the reply carried one.
    std::vector<ToolCall> tool_calls{};
};

/// Finds the calls in `text` written in `format`. A call that is malformed (JSON that does not
/// parse or is cut short, no "name", arguments that are not an object) is not a call: its text
/// stays in `content`. Never throws for any text.
EMBER_API ParsedReply parse_tool_calls(std::string_view text, ToolCallFormat format);

/// For streaming: how many leading bytes of a reply still being generated are content whatever
/// comes next. It ends where a call starts or may start: at a marker, at a partial marker at the
/// end, and (llama3; mistral without its control token) at a reply that opens with `{` or `[`
/// or has only whitespace so far. Send those bytes; hold the rest until the reply is complete,
/// then parse_tool_calls the whole reply.
EMBER_API std::size_t tool_call_free_prefix(std::string_view partial_reply, ToolCallFormat format) noexcept;

/// Options for tool_call_grammar.
struct ToolCallGrammarOptions {
    std::string function{};  ///< Only this function may be called ("": any of the tools).
    bool parallel = true;    ///< Allow more than one call in a reply.
};

/// A GBNF grammar (for SamplerOptions::grammar) whose sentences are replies made of tool calls
/// in `format`, each calling one of `tools` (OpenAI's JSON array, as ChatTemplateOptions::tools)
/// with arguments that are an instance of its `parameters` JSON Schema (converted as
/// json_schema_to_grammar does; without `parameters` the function takes none: `{}`). Throws
/// ember::Error naming the tool for tools that are not OpenAI function tools, a schema the
/// converter refuses, an empty list, or a `function` that is not among the tools.
EMBER_API std::string tool_call_grammar(std::string_view tools, ToolCallFormat format,
                                        const ToolCallGrammarOptions& options = {});

}  // namespace ember

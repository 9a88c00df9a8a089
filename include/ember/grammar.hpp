// ember/grammar.hpp: structured-output helpers (see docs/grammars.md).
//
// SamplerOptions::grammar takes GBNF text and SamplerOptions::json_schema a JSON Schema; these
// functions expose the conversion and the checks for tools and servers that want to show or
// validate a grammar before sampling with it.
#pragma once

#include <string>
#include <string_view>

namespace ember {

/// The schema of OpenAI's `response_format: {"type": "json_object"}` (any JSON object), for
/// SamplerOptions::json_schema.
inline constexpr std::string_view kJsonObjectSchema = R"({"type": "object"})";

/// Converts a JSON Schema (JSON text) to a GBNF grammar whose `root` matches the JSON texts
/// that are instances of the schema, as llama.cpp's json-schema-to-grammar does: `type` (and
/// unions of types), `properties`, `required`, `additionalProperties` (false unless given),
/// `items`, `prefixItems`, `minItems`, `maxItems`, `enum`, `const`, `anyOf`, `oneOf`, `allOf`
/// (of object schemas), local `$ref` (`#/$defs/...`, `#/definitions/...`, any `#/` pointer),
/// string `format` (date, time, date-time, uuid), `minLength`, `maxLength`, `pattern` (a regex
/// subset), and `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum` on integers and, with
/// integer bounds, on numbers. Whitespace between tokens is limited as llama.cpp limits it.
/// Throws ember::Error naming the schema path for invalid JSON, unsupported keywords values or
/// regex features, and schemas nested deeper than 64 levels.
std::string json_schema_to_grammar(std::string_view json_schema);

/// Checks GBNF text as SamplerOptions::grammar would. Throws ember::Error with line and column.
void check_grammar(std::string_view gbnf);

}  // namespace ember

// JSON Schema -> GBNF. The facts (which keywords, rule shapes, whitespace, the primitive rules,
// additionalProperties false by default, property order) follow llama.cpp's
// json-schema-to-grammar; the code is ember's. Differences: `{}` and `true` accept any value;
// `required` names missing from `properties` are required with any value; `allOf` uses each
// part's `required`; $ref names are unique per reference; escapes never produce lone
// surrogates; unanchored patterns search; numbers take integer bounds; keys are quoted exactly.
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "chat/json.hpp"
#include "ember/grammar.hpp"
#include "grammar/grammar.hpp"
#include "grammar/json_schema_parts.hpp"
#include "runtime/fail.hpp"

namespace ember {
namespace grammar {
namespace {

using json = ember::json::Value;

constexpr int kMaxDepth = 128;        // nesting of the schema document and of visits
constexpr std::int64_t kMaxCount = 10000;  // larger min/max items/length are open-ended

struct Primitive {
    const char* body;
    std::vector<const char*> deps;
};

// The primitive rules (llama.cpp's set, with \/ escapes and no lone-surrogate \u escapes).
const std::map<std::string, Primitive>& primitives() {
    static const std::map<std::string, Primitive> p = {
        {"space", {R"(| " " | "\n" [ \t]{0,20})", {}}},
        {"boolean", {R"(("true" | "false") space)", {"space"}}},
        {"null", {R"("null" space)", {"space"}}},
        {"escape", {R"([\\] (["\\/bfnrt] | "u" ([0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2})))", {}}},
        {"char", {R"([^"\\\x7F\x00-\x1F] | escape)", {"escape"}}},
        {"string", {R"("\"" char* "\"" space)", {"char", "space"}}},
        {"integral-part", {R"([0] | [1-9] [0-9]{0,15})", {}}},
        {"decimal-part", {R"([0-9]{1,16})", {}}},
        {"number", {R"(("-"? integral-part) ("." decimal-part)? ([eE] [-+]? integral-part)? space)",
                    {"integral-part", "decimal-part", "space"}}},
        {"integer", {R"(("-"? integral-part) space)", {"integral-part", "space"}}},
        {"value", {R"(object | array | string | number | boolean | null)",
                   {"object", "array", "string", "number", "boolean", "null"}}},
        {"object", {R"("{" space ( string ":" space value ("," space string ":" space value)* )? "}" space)",
                    {"string", "value", "space"}}},
        {"array", {R"("[" space ( value ("," space value)* )? "]" space)", {"value", "space"}}},
        {"uuid", {R"("\"" [0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12} "\"" space)",
                  {"space"}}},
        {"date", {R"([0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [1-2] [0-9] | "3" [0-1] ))", {}}},
        {"time", {R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{3} )? ( "Z" | ( "+" | "-" ) ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ))", {}}},
        {"date-time", {R"(date "T" time)", {"date", "time"}}},
        {"date-string", {R"("\"" date "\"" space)", {"date", "space"}}},
        {"time-string", {R"("\"" time "\"" space)", {"time", "space"}}},
        {"date-time-string", {R"("\"" date-time "\"" space)", {"date-time", "space"}}},
    };
    return p;
}

bool reserved(const std::string& name) { return name == "root" || primitives().count(name) > 0; }

std::string sanitize(const std::string& name) {
    std::string out;
    bool dash = false;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
        if (ok) {
            out += c;
            dash = false;
        } else if (!dash) {
            out += '-';
            dash = true;
        }
    }
    return out.empty() ? "r" : out;
}

std::string repetition(const std::string& item, std::int64_t min, std::optional<std::int64_t> max_count,
                       const std::string& separator) {
    // A maximum above kMaxCount counts as none. (Plain values rather than the optional: GCC 12
    // reported *max as maybe uninitialized after the reset.)
    const bool bounded = max_count && *max_count <= kMaxCount;
    const std::int64_t max = bounded ? *max_count : 0;
    if (min > kMaxCount) fail("JSON Schema: a minimum count above " + std::to_string(kMaxCount) + " is not supported");
    if (bounded && max < min) fail("JSON Schema: maximum count " + std::to_string(max) + " is below the minimum " + std::to_string(min));
    if (bounded && max == 0) return "";
    if (min == 0 && bounded && max == 1) return item + "?";
    if (separator.empty()) {
        if (!bounded) return min == 0 ? item + "*" : min == 1 ? item + "+" : item + "{" + std::to_string(min) + ",}";
        return item + "{" + std::to_string(min) + (min == max ? "" : "," + std::to_string(max)) + "}";
    }
    std::optional<std::int64_t> rest_max;
    if (bounded) rest_max = max - 1;
    const std::string rest = repetition("(" + separator + " " + item + ")", min == 0 ? 0 : min - 1, rest_max, "");
    const std::string seq = rest.empty() ? item : item + " " + rest;
    return min == 0 ? "(" + seq + ")?" : seq;
}

class Converter {
public:
    explicit Converter(json schema) : root_(std::move(schema)) {}

    std::string run() {
        add_primitive("space");
        const std::string top = visit(root_, "", "#", 0);
        if (top != "root") rules_["root"] = top;
        std::string out;
        for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
        return out;
    }

private:
    [[noreturn]] void error(const std::string& path, const std::string& what) const {
        fail("JSON Schema at " + path + ": " + what);
    }

    std::string add_rule(const std::string& raw_name, const std::string& body) {
        const std::string name = sanitize(raw_name);
        auto it = rules_.find(name);
        if (it == rules_.end() || it->second == body || it->second == kPending) {
            rules_[name] = body;
            return name;
        }
        for (int i = 0;; ++i) {
            const std::string candidate = name + std::to_string(i);
            auto c = rules_.find(candidate);
            if (c == rules_.end() || c->second == body) {
                rules_[candidate] = body;
                return candidate;
            }
        }
    }

    std::string add_primitive(const std::string& name) {
        const Primitive& p = primitives().at(name);
        if (!rules_.count(name)) {
            rules_[name] = p.body;
            for (const char* dep : p.deps) add_primitive(dep);
        }
        return name;
    }

    static std::string child(const std::string& name, const std::string& part) {
        return name.empty() ? part : name + "-" + part;
    }

    // ---- $ref -------------------------------------------------------------------------------

    const json& resolve_pointer(const std::string& ref, const std::string& path) const {
        if (ref.empty() || ref[0] != '#') error(path, "only local references (\"#/...\") are supported, got \"" + ref + "\"");
        const json* node = &root_;
        std::size_t at = 1;
        if (ref.size() > 1 && ref[1] != '/') error(path, "unsupported reference \"" + ref + "\"");
        while (at < ref.size()) {
            const std::size_t next = ref.find('/', at + 1);
            std::string token = ref.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
            for (std::size_t i = 0; (i = token.find('~', i)) != std::string::npos; ++i) {
                if (i + 1 < token.size() && token[i + 1] == '1') token.replace(i, 2, "/");
                else if (i + 1 < token.size() && token[i + 1] == '0') token.replace(i, 2, "~");
            }
            if (node->is_object() && node->contains(token)) {
                node = &(*node)[token];
            } else if (node->is_array() && !token.empty() && token.find_first_not_of("0123456789") == std::string::npos &&
                       token.size() < 9 && std::stoul(token) < node->size()) {
                node = &(*node)[std::stoul(token)];
            } else {
                error(path, "reference \"" + ref + "\" does not resolve");
            }
            if (next == std::string::npos) break;
            at = next;
        }
        return *node;
    }

    std::string visit_ref(const std::string& ref, const std::string& path, int depth) {
        if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return it->second;
        const json& target = resolve_pointer(ref, path);
        std::string name = sanitize(ref.substr(ref.find_last_of('/') + 1));
        if (reserved(name) || name == "r") name += "-";
        while (rules_.count(name)) name += "-";
        rules_[name] = kPending;  // recursion refers to the name
        ref_rules_[ref] = name;
        const std::string body = visit(target, name, ref, depth + 1);
        if (body != name) rules_[name] = body;  // an alias of a shared rule
        return name;
    }

    // ---- schemas ------------------------------------------------------------------------------

    std::string visit(const json& schema, const std::string& name, const std::string& path, int depth) {
        if (depth > kMaxDepth) error(path, "schema nested deeper than " + std::to_string(kMaxDepth) + " levels");
        const std::string rule_name = name.empty() ? "root" : reserved(name) ? name + "-" : name;
        if (schema.is_boolean()) {
            if (!schema.get<bool>()) error(path, "the schema false accepts nothing");
            return add_primitive("value");
        }
        if (!schema.is_object()) error(path, "a schema must be an object or a boolean");

        if (schema.contains("$ref")) {
            if (!schema["$ref"].is_string()) error(path, "$ref must be a string");
            return add_rule(rule_name, visit_ref(schema["$ref"].get<std::string>(), path + "/$ref", depth));
        }
        for (const char* key : {"oneOf", "anyOf"}) {
            if (!schema.contains(key)) continue;
            const json& alts = schema[key];
            if (!alts.is_array() || alts.empty()) error(path, std::string(key) + " must be a non-empty array");
            std::string body;
            for (std::size_t i = 0; i < alts.size(); ++i) {
                if (i) body += " | ";
                body += visit(alts[i], child(name.empty() ? "alternative" : name, std::to_string(i)),
                              path + "/" + key + "/" + std::to_string(i), depth + 1);
            }
            return add_rule(rule_name, body);
        }
        const json type = schema.contains("type") ? schema["type"] : json();
        if (type.is_array()) {
            if (type.empty()) error(path, "type must not be an empty array");
            std::string body;
            for (std::size_t i = 0; i < type.size(); ++i) {
                json copy = schema;
                copy["type"] = type[i];
                if (i) body += " | ";
                body += visit(copy, child(name.empty() ? "alternative" : name, std::to_string(i)), path, depth + 1);
            }
            return add_rule(rule_name, body);
        }
        if (!type.is_null() && !type.is_string()) error(path, "type must be a string or an array of strings");
        const std::string t = type.is_string() ? type.get<std::string>() : "";
        static const std::set<std::string> kTypes = {"", "object", "array", "string", "number", "integer", "boolean", "null"};
        if (!kTypes.count(t)) error(path, "unknown type \"" + t + "\"");

        if (schema.contains("const")) return add_rule(rule_name, gbnf_literal(schema["const"].dump()) + " space");
        if (schema.contains("enum")) {
            const json& values = schema["enum"];
            if (!values.is_array() || values.empty()) error(path, "enum must be a non-empty array");
            std::string body = "(";
            for (std::size_t i = 0; i < values.size(); ++i) body += (i ? " | " : "") + gbnf_literal(values[i].dump());
            return add_rule(rule_name, body + ") space");
        }
        if ((t.empty() || t == "object") && schema.contains("allOf")) return visit_all_of(schema, name, rule_name, path, depth);
        if ((t.empty() || t == "object") &&
            (schema.contains("properties") || schema.contains("required") ||
             (schema.contains("additionalProperties") && schema["additionalProperties"] != json(true)))) {
            return add_rule(rule_name, object_rule(schema, schema, name, path, depth));
        }
        if ((t.empty() || t == "array") &&
            (schema.contains("items") || schema.contains("prefixItems") || schema.contains("minItems") ||
             schema.contains("maxItems"))) {
            return add_rule(rule_name, array_rule(schema, name, path, depth));
        }
        if ((t.empty() || t == "string") && schema.contains("pattern")) {
            if (!schema["pattern"].is_string()) error(path, "pattern must be a string");
            return add_rule(rule_name, "\"\\\"\" " + pattern_content(schema["pattern"].get<std::string>()) + " \"\\\"\" space");
        }
        if ((t.empty() || t == "string") && schema.contains("format") && schema["format"].is_string()) {
            const std::string format = schema["format"].get<std::string>();
            const bool uuid = format.rfind("uuid", 0) == 0 && format.size() <= 5;
            if (uuid) return add_rule(rule_name, add_primitive("uuid"));
            if (format == "date" || format == "time" || format == "date-time") {
                return add_rule(rule_name, add_primitive(format + "-string"));
            }
            // Other formats (email, uri, ...) are not checked: any string.
        }
        if (t == "string" && (schema.contains("minLength") || schema.contains("maxLength"))) {
            const std::int64_t min = count(schema, "minLength", path).value_or(0);
            const std::optional<std::int64_t> max = count(schema, "maxLength", path);
            add_primitive("char");
            add_primitive("space");
            return add_rule(rule_name, "\"\\\"\" " + repetition("char", min, max, "") + " \"\\\"\" space");
        }
        if (t == "integer" || t == "number") {
            std::optional<Bound> lo, hi;
            bound(schema, "minimum", "exclusiveMinimum", t == "integer", true, lo, path);
            bound(schema, "maximum", "exclusiveMaximum", t == "integer", false, hi, path);
            if (lo || hi) {
                add_primitive("space");
                return add_rule(rule_name, (t == "integer" ? integer_range(lo, hi) : number_range(lo, hi)) + " space");
            }
        }
        if (t.empty()) return add_rule(rule_name, add_primitive("value"));
        return add_rule(rule_name, add_primitive(t));
    }

    std::optional<std::int64_t> count(const json& schema, const char* key, const std::string& path) const {
        if (!schema.contains(key)) return std::nullopt;
        const json& v = schema[key];
        const std::string message = std::string(key) + " must be a non-negative integer";
        const std::string out_of_range = std::string(key) + " is out of range";
        if (v.is_number_unsigned()) {
            if (v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
                error(path, out_of_range);
            }
            return static_cast<std::int64_t>(v.get<std::uint64_t>());
        }
        if (v.is_number_integer()) {
            if (v.get<std::int64_t>() < 0) error(path, message);
            return v.get<std::int64_t>();
        }
        // A float holding an integer (2.0); compared in double before any conversion, which is
        // undefined past int64's range.
        const double d = v.is_number_float() ? v.get<double>() : -1.0;
        if (!(d >= 0 && d == std::floor(d))) error(path, message);
        if (d >= std::ldexp(1.0, 63)) error(path, out_of_range);
        return static_cast<std::int64_t>(d);
    }

    // Reads minimum/exclusiveMinimum (or the maxima) into `out`: the tighter of both, with
    // draft-4 boolean exclusiveMinimum honoured. Integers round inward; numbers need integer
    // bounds.
    void bound(const json& schema, const char* inclusive_key, const char* exclusive_key, bool integer, bool lower,
               std::optional<Bound>& out, const std::string& path) const {
        auto take = [&](const json& v, bool exclusive, const char* key) {
            if (!v.is_number()) error(path, std::string(key) + " must be a number");
            const double d = v.get<double>();
            if (!(d > -1e18 && d < 1e18)) error(path, std::string(key) + " is out of range");
            Bound b;
            const double r = lower ? std::ceil(d) : std::floor(d);
            if (r != d) {
                if (!integer) error(path, std::string(key) + " " + v.dump() + " on a number: only integer bounds are supported");
                exclusive = false;  // rounding inward already excludes the bound
            }
            b.value = static_cast<std::int64_t>(r);
            b.exclusive = exclusive;
            const bool tighter = !out || (lower ? (b.value > out->value || (b.value == out->value && b.exclusive))
                                                : (b.value < out->value || (b.value == out->value && b.exclusive)));
            if (tighter) out = b;
        };
        const bool draft4_exclusive = schema.contains(exclusive_key) && schema[exclusive_key].is_boolean() &&
                                      schema[exclusive_key].get<bool>();
        if (schema.contains(inclusive_key)) take(schema[inclusive_key], draft4_exclusive, inclusive_key);
        if (schema.contains(exclusive_key) && !schema[exclusive_key].is_boolean()) {
            take(schema[exclusive_key], true, exclusive_key);
        }
    }

    // ---- objects ------------------------------------------------------------------------------

    // `props_from` supplies properties/required; `schema` supplies additionalProperties.
    std::string object_rule(const json& schema, const json& props_from, const std::string& name,
                            const std::string& path, int depth) {
        std::vector<std::pair<std::string, const json*>> props;
        if (props_from.contains("properties")) {
            if (!props_from["properties"].is_object()) error(path, "properties must be an object");
            for (const auto& [key, value] : props_from["properties"].items()) props.emplace_back(key, &value);
        }
        std::set<std::string> required;
        static const json kAnything = true;
        if (props_from.contains("required")) {
            if (!props_from["required"].is_array()) error(path, "required must be an array");
            for (const json& r : props_from["required"]) {
                if (!r.is_string()) error(path, "required must list strings");
                const std::string key = r.get<std::string>();
                if (!required.insert(key).second) continue;
                bool listed = false;  // required but not described: any value, in this order
                for (const auto& p : props) listed = listed || p.first == key;
                if (!listed) props.emplace_back(key, &kAnything);
            }
        }
        return build_object(props, required, schema.contains("additionalProperties") ? schema["additionalProperties"] : json(),
                            name, path, depth);
    }

    std::string build_object(const std::vector<std::pair<std::string, const json*>>& props,
                             const std::set<std::string>& required, const json& additional,
                             const std::string& name, const std::string& path, int depth) {
        std::map<std::string, std::string> kv;
        std::vector<std::string> required_keys, optional_keys;
        for (const auto& [key, schema] : props) {
            const std::string value = visit(*schema, child(name, key), path + "/properties/" + key, depth + 1);
            kv[key] = add_rule(child(name, key) + "-kv",
                               gbnf_literal(json(key).dump()) + " space \":\" space " + value);
            (required.count(key) ? required_keys : optional_keys).push_back(key);
        }
        if (!additional.is_null() && !additional.is_boolean() && !additional.is_object()) {
            error(path, "additionalProperties must be a boolean or a schema");
        }
        if ((additional.is_boolean() && additional.get<bool>()) || additional.is_object()) {
            const std::string sub = child(name, "additional");
            const std::string value = additional.is_object() ? visit(additional, sub + "-value", path + "/additionalProperties", depth + 1)
                                                             : add_primitive("value");
            std::vector<std::string> names;
            for (const auto& p : props) names.push_back(p.first);
            const std::string key = names.empty() ? add_primitive("string") : add_rule(sub + "-k", not_strings(names));
            kv["*"] = add_rule(sub + "-kv", key + " \":\" space " + value);
            optional_keys.push_back("*");
        }
        std::string rule = "\"{\" space ";
        for (std::size_t i = 0; i < required_keys.size(); ++i) rule += (i ? " \",\" space " : "") + kv[required_keys[i]];
        if (!optional_keys.empty()) {
            rule += " (";
            if (!required_keys.empty()) rule += " \",\" space ( ";
            for (std::size_t i = 0; i < optional_keys.size(); ++i) {
                if (i) rule += " | ";
                rule += optional_chain(optional_keys, i, false, kv, name);
            }
            if (!required_keys.empty()) rule += " )";
            rule += " )?";
        }
        return rule + " \"}\" space";
    }

    // Optional properties keys[from..] in order, each present or not ("*": any number of
    // additional properties); the first one present unless `first_optional`.
    std::string optional_chain(const std::vector<std::string>& keys, std::size_t from, bool first_optional,
                               std::map<std::string, std::string>& kv, const std::string& name) {
        const std::string& k = keys[from];
        const std::string comma = "( \",\" space " + kv[k] + " )";
        std::string out = first_optional ? comma + (k == "*" ? "*" : "?") : kv[k] + (k == "*" ? " " + comma + "*" : "");
        if (from + 1 < keys.size()) {
            out += " " + add_rule(child(name, k == "*" ? "additional" : k) + "-rest",
                                  optional_chain(keys, from + 1, true, kv, name));
        }
        return out;
    }

    // A JSON string key that is none of `names`: a trie over their characters, each branch
    // continuing with any characters once it leaves the trie.
    std::string not_strings(const std::vector<std::string>& names) {
        struct Node {
            std::map<std::string, Node> children;  // JSON text of one character -> subtree
            bool end = false;
        };
        Node trie;
        for (const std::string& n : names) {
            const std::string text = json(n).dump();  // "..." with JSON escapes
            Node* node = &trie;
            for (std::size_t i = 1; i + 1 < text.size();) {
                std::size_t len = 1;
                if (text[i] == '\\') len = text[i + 1] == 'u' ? 6 : 2;
                else if (static_cast<unsigned char>(text[i]) >= 0x80) {
                    len = static_cast<unsigned char>(text[i]) >= 0xF0 ? 4 : static_cast<unsigned char>(text[i]) >= 0xE0 ? 3 : 2;
                }
                node = &node->children[text.substr(i, len)];
                i += len;
            }
            node->end = true;
        }
        const std::string ch = add_primitive("char");
        add_primitive("escape");
        std::string out = "[\"] ( ";
        // Iterative would be longer; names come from a parsed schema bounded in depth by the
        // length of one key, which the JSON parser already holds in memory.
        std::function<void(const Node&)> emit = [&](const Node& node) {
            std::string plain_excluded;
            bool first = true;
            for (const auto& [unit, sub] : node.children) {
                if (!first) out += " | ";
                first = false;
                out += gbnf_literal(unit);
                if (unit.size() == 1 || unit[0] != '\\') plain_excluded += unit;
                if (!sub.children.empty()) {
                    out += " (";
                    emit(sub);
                    out += ")";
                } else if (sub.end) {
                    out += " " + ch + "+";
                }
            }
            if (!node.children.empty()) {
                if (!first) out += " | ";
                std::string cls = "[^\"\\\\\\x7F\\x00-\\x1F";
                for (char c : plain_excluded) {
                    if (c == ']' || c == '\\' || c == '-' || c == '^' || c == '[') cls += '\\';
                    cls += c;
                }
                out += "(" + cls + "] | escape) " + ch + "*";
            }
        };
        emit(trie);
        out += " )";
        if (!trie.end) out += "?";
        return out + " [\"] space";
    }

    std::string visit_all_of(const json& schema, const std::string& name, const std::string& rule_name,
                             const std::string& path, int depth) {
        const json& parts = schema["allOf"];
        if (!parts.is_array() || parts.empty()) error(path, "allOf must be a non-empty array");
        json merged = json::object();
        merged["properties"] = json::object();
        merged["required"] = json::array();
        if (schema.contains("required") && schema["required"].is_array()) {
            for (const json& r : schema["required"]) merged["required"].push_back(r);
        }
        if (schema.contains("properties") && schema["properties"].is_object()) {
            for (const auto& [k, v] : schema["properties"].items()) merged["properties"][k] = v;
        }
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const json* part = &parts[i];
            for (int hops = 0; part->is_object() && part->contains("$ref"); ++hops) {
                if (hops > kMaxDepth || !(*part)["$ref"].is_string()) error(path, "allOf: unresolvable $ref");
                part = &resolve_pointer((*part)["$ref"].get<std::string>(), path);
            }
            if (!part->is_object() || (!part->contains("properties") && !part->contains("required"))) {
                error(path + "/allOf/" + std::to_string(i), "allOf is supported for object schemas with properties only");
            }
            if (part->contains("properties") && (*part)["properties"].is_object()) {
                for (const auto& [k, v] : (*part)["properties"].items()) merged["properties"][k] = v;
            }
            if (part->contains("required") && (*part)["required"].is_array()) {
                for (const json& r : (*part)["required"]) merged["required"].push_back(r);
            }
        }
        merged_.push_back(std::make_unique<json>(std::move(merged)));  // visits keep pointers
        return add_rule(rule_name, object_rule(schema, *merged_.back(), name, path, depth));
    }

    // ---- arrays -------------------------------------------------------------------------------

    std::string array_rule(const json& schema, const std::string& name, const std::string& path, int depth) {
        const std::int64_t min = count(schema, "minItems", path).value_or(0);
        const std::optional<std::int64_t> max = count(schema, "maxItems", path);
        const json* tuple = nullptr;
        const json* items = schema.contains("items") ? &schema["items"] : nullptr;
        if (schema.contains("prefixItems")) {
            tuple = &schema["prefixItems"];
        } else if (items && items->is_array()) {  // draft 4 tuples
            tuple = items;
            items = schema.contains("additionalItems") ? &schema["additionalItems"] : nullptr;
        }
        std::string rule = "\"[\" space ";
        std::int64_t n_tuple = 0;
        if (tuple) {
            if (!tuple->is_array()) error(path, "prefixItems must be an array");
            for (std::size_t i = 0; i < tuple->size(); ++i) {
                if (i) rule += " \",\" space ";
                rule += visit((*tuple)[i], child(name, "tuple-" + std::to_string(i)), path + "/prefixItems/" + std::to_string(i), depth + 1);
            }
            n_tuple = static_cast<std::int64_t>(tuple->size());
            if (max && *max < n_tuple) error(path, "maxItems is below the number of prefixItems");
            // More items only when `items` (or draft-4 additionalItems) is a schema.
            if (items && !items->is_boolean()) {
                const std::string item = visit(*items, child(name, "item"), path + "/items", depth + 1);
                std::optional<std::int64_t> rest_max;
                if (max) rest_max = *max - n_tuple;
                const std::string rest = repetition("(" + std::string(n_tuple ? "\",\" space " : "") + item + ")",
                                                    std::max<std::int64_t>(0, min - n_tuple), rest_max, "");
                if (!rest.empty()) rule += " " + rest;
            } else if (min > n_tuple) {
                error(path, "minItems is above the number of prefixItems and no further items are allowed");
            }
        } else {
            std::string item;
            if (!items || items->is_boolean()) {
                if (items && !items->get<bool>()) {
                    if (min > 0) error(path, "items false with minItems above 0 accepts nothing");
                    return "\"[\" space \"]\" space";
                }
                item = add_primitive("value");
            } else {
                item = visit(*items, child(name, "item"), path + "/items", depth + 1);
            }
            const std::string rep = repetition(item, min, max, "\",\" space");
            if (!rep.empty()) rule += rep;
        }
        return rule + " \"]\" space";
    }

    static constexpr const char* kPending = "<pending>";
    json root_;
    std::map<std::string, std::string> rules_;
    std::map<std::string, std::string> ref_rules_;
    std::vector<std::unique_ptr<json>> merged_;
};

}  // namespace

std::string json_schema_to_gbnf(std::string_view text) {
    if (ember::json::nesting_depth(text) > kMaxDepth) {
        fail("JSON Schema: nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    json schema;
    try {
        schema = ember::json::parse(text);
    } catch (const Error& e) {
        fail(std::string("JSON Schema: invalid ") + e.what());  // "... invalid JSON: line L, ..."
    }
    return Converter(std::move(schema)).run();
}

}  // namespace grammar

std::string json_schema_to_grammar(std::string_view json_schema) {
    return grammar::json_schema_to_gbnf(json_schema);
}

void check_grammar(std::string_view gbnf) { (void)grammar::parse_gbnf(gbnf); }

}  // namespace ember

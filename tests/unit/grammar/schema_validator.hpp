// A small JSON Schema validator for the keywords ember's converter supports, written from the
// JSON Schema specification (draft 2020-12) independently of the converter, to check what
// constrained generation produces. Returns "" when `value` is valid, else why not.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace grammar_test {

using ojson = nlohmann::ordered_json;

// std::regex is slow to compile: its users live in schema_validator.cpp, built once.
/// Whether `str` matches the ECMAScript `pattern` anywhere (JSON Schema's "pattern").
bool matches_pattern(const std::string& str, const std::string& pattern);
/// Whether `str` is a valid `format` ("date", "time", "date-time", "uuid"; others: true).
bool matches_format(const std::string& str, const std::string& format);

class SchemaValidator {
public:
    explicit SchemaValidator(ojson root) : root_(std::move(root)) {}

    std::string validate(const ojson& value) const { return check(root_, value, "$"); }

private:
    static std::size_t code_points(const std::string& s) {
        std::size_t n = 0;
        for (unsigned char c : s) n += (c & 0xC0) != 0x80;
        return n;
    }

    static bool has_type(const ojson& v, const std::string& t) {
        if (t == "object") return v.is_object();
        if (t == "array") return v.is_array();
        if (t == "string") return v.is_string();
        if (t == "boolean") return v.is_boolean();
        if (t == "null") return v.is_null();
        if (t == "number") return v.is_number();
        if (t == "integer") return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
        return false;
    }

    const ojson& deref(const std::string& ref) const {
        const ojson* node = &root_;
        std::size_t at = 1;
        while (at < ref.size()) {
            const std::size_t next = ref.find('/', at + 1);
            const std::string key = ref.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
            node = &(*node)[key];
            if (next == std::string::npos) break;
            at = next;
        }
        return *node;
    }

    std::string check(const ojson& s, const ojson& v, const std::string& where) const {
        if (s.is_boolean()) return s.get<bool>() ? "" : where + ": schema false";
        if (s.contains("$ref")) return check(deref(s["$ref"].get<std::string>()), v, where);
        if (s.contains("type")) {
            bool ok = false;
            if (s["type"].is_array()) {
                for (const auto& t : s["type"]) ok = ok || has_type(v, t.get<std::string>());
            } else {
                ok = has_type(v, s["type"].get<std::string>());
            }
            if (!ok) return where + ": not of type " + s["type"].dump();
        }
        if (s.contains("const") && !(s["const"] == v)) return where + ": not the const";
        if (s.contains("enum")) {
            bool found = false;
            for (const auto& e : s["enum"]) found = found || e == v;
            if (!found) return where + ": not in the enum";
        }
        for (const char* key : {"anyOf", "oneOf"}) {
            if (!s.contains(key)) continue;
            int n = 0;
            for (const auto& alt : s[key]) n += check(alt, v, where).empty() ? 1 : 0;
            if (n == 0 || (std::string(key) == "oneOf" && n != 1)) return where + ": " + key + " matched " + std::to_string(n);
        }
        if (s.contains("allOf")) {
            for (const auto& part : s["allOf"]) {
                if (auto e = check(part, v, where); !e.empty()) return e;
            }
        }
        if (v.is_object()) {
            if (s.contains("required")) {
                for (const auto& r : s["required"]) {
                    if (!v.contains(r.get<std::string>())) return where + ": missing " + r.get<std::string>();
                }
            }
            for (const auto& [k, x] : v.items()) {
                const bool listed = s.contains("properties") && s["properties"].contains(k);
                if (listed) {
                    if (auto e = check(s["properties"][k], x, where + "." + k); !e.empty()) return e;
                } else if (s.contains("additionalProperties")) {
                    if (auto e = check(s["additionalProperties"], x, where + "." + k); !e.empty()) return e;
                }
            }
        }
        if (v.is_array()) {
            if (s.contains("minItems") && v.size() < s["minItems"].get<std::size_t>()) return where + ": too few items";
            if (s.contains("maxItems") && v.size() > s["maxItems"].get<std::size_t>()) return where + ": too many items";
            std::size_t first = 0;
            if (s.contains("prefixItems")) {
                for (; first < s["prefixItems"].size() && first < v.size(); ++first) {
                    if (auto e = check(s["prefixItems"][first], v[first], where + "[" + std::to_string(first) + "]"); !e.empty()) return e;
                }
            }
            if (s.contains("items")) {
                for (std::size_t i = first; i < v.size(); ++i) {
                    if (auto e = check(s["items"], v[i], where + "[" + std::to_string(i) + "]"); !e.empty()) return e;
                }
            }
        }
        if (v.is_string()) {
            const std::string str = v.get<std::string>();
            if (s.contains("minLength") && code_points(str) < s["minLength"].get<std::size_t>()) return where + ": too short";
            if (s.contains("maxLength") && code_points(str) > s["maxLength"].get<std::size_t>()) return where + ": too long";
            if (s.contains("pattern") && !matches_pattern(str, s["pattern"].get<std::string>())) {
                return where + ": does not match the pattern";
            }
            if (s.contains("format") && !matches_format(str, s["format"].get<std::string>())) {
                return where + ": not a " + s["format"].get<std::string>();
            }
        }
        if (v.is_number()) {
            const double x = v.get<double>();
            if (s.contains("minimum") && x < s["minimum"].get<double>()) return where + ": below minimum";
            if (s.contains("maximum") && x > s["maximum"].get<double>()) return where + ": above maximum";
            if (s.contains("exclusiveMinimum") && x <= s["exclusiveMinimum"].get<double>()) return where + ": not above exclusiveMinimum";
            if (s.contains("exclusiveMaximum") && x >= s["exclusiveMaximum"].get<double>()) return where + ": not below exclusiveMaximum";
        }
        return "";
    }

    ojson root_;
};

}  // namespace grammar_test

// The regular-expression checks of the test's JSON Schema validator (schema_validator.hpp).
#include "schema_validator.hpp"

#include <regex>

namespace grammar_test {

bool matches_pattern(const std::string& str, const std::string& pattern) {
    return std::regex_search(str, std::regex(pattern, std::regex::ECMAScript));
}

bool matches_format(const std::string& str, const std::string& format) {
    static const std::regex date(R"(^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$)");
    static const std::regex time(R"(^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{3})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$)");
    static const std::regex uuid(R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)");
    const std::size_t t = str.find('T');
    if (format == "date") return std::regex_match(str, date);
    if (format == "time") return std::regex_match(str, time);
    if (format == "date-time") {
        return t != std::string::npos && std::regex_match(str.substr(0, t), date) &&
               std::regex_match(str.substr(t + 1), time);
    }
    if (format == "uuid") return std::regex_match(str, uuid);
    return true;
}

}  // namespace grammar_test

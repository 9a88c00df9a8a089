// Python str methods on UTF-8 text, as templates use them. Case mapping is ASCII-only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja_value.hpp"

namespace ember::jinja {

enum class StripSide { both, left, right };

/// str.strip/lstrip/rstrip: `chars` (code points) or whitespace when absent.
std::string py_strip(std::string_view s, const std::optional<std::string>& chars, StripSide side);
/// str.split(sep, maxsplit): whitespace splitting when sep is absent; maxsplit < 0 means all.
std::vector<std::string> py_split(std::string_view s, const std::optional<std::string>& sep, long long maxsplit);
/// str.rsplit(sep, maxsplit).
std::vector<std::string> py_rsplit(std::string_view s, const std::optional<std::string>& sep, long long maxsplit);
/// str.replace(old, new, count); count < 0 replaces all. Throws past max_bytes.
std::string py_replace(std::string_view s, std::string_view from, std::string_view to, long long count,
                       std::size_t max_bytes);
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
std::string py_title(std::string_view s);       ///< str.title()
std::string py_capitalize(std::string_view s);  ///< str.capitalize()
std::string jinja_title(std::string_view s);    ///< Jinja's title filter (splits at -, space, brackets)
std::vector<std::string> py_splitlines(std::string_view s);
bool py_is_space_char(char c);

/// str.format(*args, **kwargs) for {} / {0} / {name} fields (format specs: fill/align/width,
/// precision and type for numbers and strings).
std::string py_format(std::string_view fmt, const CallArgs& args);
/// printf-style `fmt % args` (%s %r %d %i %f %x %% with flags/width/precision).
std::string py_percent_format(std::string_view fmt, const std::vector<Value>& args);
/// HTML escaping as markupsafe does it (& < > " ').
std::string html_escape(std::string_view s);

}  // namespace ember::jinja

#include "cli/args.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace ember::cli {
namespace {

std::string show_real(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

std::string quoted(std::string_view text) {
    std::string q(1, '\'');
    q.append(text);
    q += '\'';
    return q;
}

[[noreturn]] void bad_value(std::string_view flag, const std::string& what) {
    throw UsageError(std::string(flag) + ": " + what);
}

}  // namespace

std::string describe(IntRange r) {
    char b[64];
    std::snprintf(b, sizeof b, "[%lld, %lld]", r.min, r.max);
    return b;
}

std::string describe(RealRange r) {
    char b[80];
    std::snprintf(b, sizeof b, "%c%s, %s]", r.min_open ? '(' : '[', show_real(r.min).c_str(), show_real(r.max).c_str());
    return b;
}

namespace {

// Parses the whole of `text` as a T with from_chars; a number too large for T is out of range,
// anything else that does not parse is "not KIND".
template <class T>
T parse_whole(std::string_view flag, std::string_view text, const std::string& range, const char* kind) {
    T v{};
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (ec == std::errc::result_out_of_range && ptr == end) bad_value(flag, std::string(text) + " is out of range " + range);
    if (text.empty() || ec != std::errc() || ptr != end) bad_value(flag, quoted(text) + " is not " + kind + " in " + range);
    return v;
}

}  // namespace

long long parse_int(std::string_view flag, std::string_view text, IntRange range) {
    const long long v = parse_whole<long long>(flag, text, describe(range), "an integer");
    if (v < range.min || v > range.max) bad_value(flag, std::string(text) + " is out of range " + describe(range));
    return v;
}

std::uint64_t parse_u64(std::string_view flag, std::string_view text) {
    return parse_whole<std::uint64_t>(flag, text, "[0, 18446744073709551615]", "an integer");
}

double parse_real(std::string_view flag, std::string_view text, RealRange range) {
    const double v = parse_whole<double>(flag, text, describe(range), "a number");
    if (!std::isfinite(v)) bad_value(flag, quoted(text) + " is not a finite number in " + describe(range));
    const bool below = range.min_open ? !(v > range.min) : v < range.min;
    if (below || v > range.max) bad_value(flag, std::string(text) + " is out of range " + describe(range));
    return v;
}

ember::KvType parse_kv_type(std::string_view flag, std::string_view text) {
    if (text == "f32") return ember::KvType::f32;
    if (text == "f16") return ember::KvType::f16;
    if (text == "q8_0") return ember::KvType::q8_0;
    bad_value(flag, quoted(text) + " is not one of f32, f16, q8_0");
}

std::string ArgReader::value() {
    const std::string flag(arg());
    if (i_ + 1 >= argc_) throw UsageError(flag + " needs a value");
    return argv_[++i_];
}

void ArgReader::unknown() const { throw UsageError("unknown argument " + quoted(arg())); }

}  // namespace ember::cli

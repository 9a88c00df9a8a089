// Command-line flags of the ember tools and ember-chat. Every numeric flag has a documented
// range that is checked while parsing: a bad value is a UsageError (exit code 2) whose one-line
// message names the flag, the value and the range, e.g.
//   --top-p: 2 is out of range [0, 1]
//   --temp: 'nan' is not a number in [0, 100]
// NaN and infinities are never accepted; integers must be whole decimal numbers that fit.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ember/types.hpp"

namespace ember::cli {

/// A bad command line: the tool prints the message on one line and exits with code 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// An inclusive range for an integer flag.
struct IntRange {
    long long min;
    long long max;
};

/// A range for a real-valued flag: [min, max], or (min, max] with min_open.
struct RealRange {
    double min;
    double max;
    bool min_open = false;
};

/// "[0, 1024]" / "(0, 100]".
std::string describe(IntRange range);
std::string describe(RealRange range);

/// Parses `text` as a decimal integer in `range`; throws UsageError naming `flag` otherwise.
long long parse_int(std::string_view flag, std::string_view text, IntRange range);
/// Parses `text` as an unsigned 64-bit decimal integer (e.g. a seed).
std::uint64_t parse_u64(std::string_view flag, std::string_view text);
/// Parses `text` as a finite real number in `range`; throws UsageError naming `flag` otherwise.
double parse_real(std::string_view flag, std::string_view text, RealRange range);

/// Parses "f32", "f16" or "q8_0" (the KV cache types); throws UsageError naming `flag` otherwise.
ember::KvType parse_kv_type(std::string_view flag, std::string_view text);

// Ranges shared by the tools (each tool documents its flags with them in --help).
inline constexpr IntRange kThreadRange{0, 1024};             ///< -t: 0 = all hardware threads
inline constexpr IntRange kContextRange{0, 1 << 20};         ///< -c: tokens (0 = model's default)
inline constexpr IntRange kTokenCountRange{0, 1 << 20};      ///< token counts (-p/-n of ember-bench, ...)
inline constexpr IntRange kKvTokensRange{1, 1LL << 30};      ///< --kv-tokens: a shared KV pool, in tokens

/// Walks argv one argument at a time:
///   ArgReader args(argc, argv);
///   while (args.next()) {
///       if (args.is("-t", "--threads")) threads = args.int_value(kThreadRange);
///       else args.unknown();
///   }
class ArgReader {
public:
    ArgReader(int argc, char** argv) : argc_(argc), argv_(argv) {}

    /// Moves to the next argument; false when there is none left.
    bool next() noexcept { return ++i_ < argc_; }
    /// The current argument.
    std::string_view arg() const noexcept { return argv_[i_]; }
    bool is(std::string_view name) const noexcept { return arg() == name; }
    bool is(std::string_view short_name, std::string_view long_name) const noexcept {
        return arg() == short_name || arg() == long_name;
    }
    /// The argument after the current flag (consumed); UsageError when it is missing.
    std::string value();
    long long int_value(IntRange range) {
        const std::string flag(arg());
        return parse_int(flag, value(), range);
    }
    std::uint64_t u64_value() {
        const std::string flag(arg());
        return parse_u64(flag, value());
    }
    double real_value(RealRange range) {
        const std::string flag(arg());
        return parse_real(flag, value(), range);
    }
    ember::KvType kv_type_value() {
        const std::string flag(arg());
        return parse_kv_type(flag, value());
    }
    /// Throws UsageError for the current argument ("unknown argument 'X'").
    [[noreturn]] void unknown() const;

private:
    int argc_;
    char** argv_;
    int i_ = 0;
};

}  // namespace ember::cli

// Decimal ranges as GBNF: equal-length digit strings between two bounds split on their first
// differing digit (the usual construction, as llama.cpp's _build_min_max_int does), lengths
// handled one at a time, negatives as '-' and the mirrored positive range.
#include <string>
#include <vector>

#include "grammar/json_schema_parts.hpp"
#include "runtime/fail.hpp"

// GCC 12's -Wrestrict misreads "literal" + std::string&& in libstdc++ (GCC bug 105651).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace ember::grammar {
namespace {

std::string join_alternatives(const std::vector<std::string>& alts) {
    if (alts.size() == 1) return alts[0];
    std::string out = "(";
    for (std::size_t i = 0; i < alts.size(); ++i) {
        if (i) out += " | ";
        out += alts[i];
    }
    return out + ")";
}

std::string digits(char from, char to) {
    if (from == to) return std::string("[") + from + "]";
    return std::string("[") + from + "-" + to + "]";
}

std::string any_digits(std::size_t n) {
    if (n == 0) return "";
    return n == 1 ? "[0-9]" : "[0-9]{" + std::to_string(n) + "}";
}

// All digit strings of a's length between a and b (a <= b, equal lengths; leading zeros are
// allowed: these are suffixes).
std::string same_length(const std::string& a, const std::string& b) {
    const std::size_t n = a.size();
    if (n == 0) return "";
    if (a == b) return "\"" + a + "\"";
    if (a[0] == b[0]) {
        return "\"" + std::string(1, a[0]) + "\" " + same_length(a.substr(1), b.substr(1));
    }
    const std::string ra = a.substr(1), rb = b.substr(1);
    const std::string zeros(n - 1, '0'), nines(n - 1, '9');
    std::vector<std::string> alts;
    char full_lo = a[0], full_hi = b[0];
    if (ra != zeros) {
        alts.push_back("[" + std::string(1, a[0]) + "] " + same_length(ra, nines));
        ++full_lo;
    }
    if (rb != nines) --full_hi;
    if (full_lo <= full_hi) {
        std::string alt = digits(full_lo, full_hi);
        if (n > 1) alt += " " + any_digits(n - 1);
        alts.push_back(alt);
    }
    if (rb != nines) alts.push_back("[" + std::string(1, b[0]) + "] " + same_length(zeros, rb));
    return join_alternatives(alts);
}

std::uint64_t pow10(std::size_t n) {
    std::uint64_t p = 1;
    while (n--) p *= 10;
    return p;
}

// Integers in [a, b], a <= b, no leading zeros.
std::string nonnegative(std::uint64_t a, std::uint64_t b) {
    std::vector<std::string> alts;
    const std::size_t da = std::to_string(a).size(), db = std::to_string(b).size();
    for (std::size_t d = da; d <= db; ++d) {
        const std::uint64_t from = d == da ? a : pow10(d - 1);
        const std::uint64_t to = d == db ? b : pow10(d) - 1;
        alts.push_back(same_length(std::to_string(from), std::to_string(to)));
    }
    return join_alternatives(alts);
}

// Integers >= a (up to kMaxIntegerDigits digits).
std::string at_least(std::uint64_t a) {
    const std::size_t da = std::to_string(a).size();
    std::vector<std::string> alts{nonnegative(a, pow10(da) - 1)};
    if (da < static_cast<std::size_t>(kMaxIntegerDigits)) {
        alts.push_back("[1-9] [0-9]{" + std::to_string(da) + "," + std::to_string(kMaxIntegerDigits - 1) + "}");
    }
    return join_alternatives(alts);
}

void check_bound(const std::optional<Bound>& b) {
    constexpr std::int64_t kLimit = 1000000000000000;  // 10^15: 15 digits plus one more
    if (b && (b->value >= kLimit || b->value <= -kLimit)) {
        fail("JSON Schema: bound " + std::to_string(b->value) + " is beyond +-10^15 (not supported)");
    }
}

std::string empty_range_error(const char* what) {
    return std::string("JSON Schema: the ") + what + " range is empty (minimum above maximum)";
}

}  // namespace

std::string integer_range(std::optional<Bound> lo_b, std::optional<Bound> hi_b) {
    check_bound(lo_b);
    check_bound(hi_b);
    std::optional<std::int64_t> lo, hi;
    if (lo_b) lo = lo_b->value + (lo_b->exclusive ? 1 : 0);
    if (hi_b) hi = hi_b->value - (hi_b->exclusive ? 1 : 0);
    if (lo && hi && *lo > *hi) fail(empty_range_error("integer"));
    std::vector<std::string> alts;
    // Negative x in [lo, min(hi, -1)]: '-' and y = -x in [max(1, -hi), -lo].
    if (!lo || *lo <= -1) {
        const std::int64_t from = hi ? std::max<std::int64_t>(1, -*hi) : 1;
        if (!lo) alts.push_back("\"-\" " + at_least(static_cast<std::uint64_t>(from)));
        else if (from <= -*lo) alts.push_back("\"-\" " + nonnegative(static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(-*lo)));
    }
    // Nonnegative x in [max(0, lo), hi].
    const std::int64_t from = lo ? std::max<std::int64_t>(0, *lo) : 0;
    if (!hi) alts.push_back(at_least(static_cast<std::uint64_t>(from)));
    else if (from <= *hi) alts.push_back(nonnegative(static_cast<std::uint64_t>(from), static_cast<std::uint64_t>(*hi)));
    if (alts.empty()) fail(empty_range_error("integer"));
    return join_alternatives(alts);
}

namespace {

const char* const kFraction = "(\".\" [0-9]{1,16})?";
const char* const kZeroFraction = "(\".\" \"0\"{1,16})?";
const char* const kNonzeroFraction = "\".\" \"0\"{0,15} [1-9] [0-9]{0,15}";

// Nonnegative reals y (integer part, optional fraction) with lo <= y (or lo < y) and y <= hi
// (or y < hi); integer bounds >= 0; a missing hi is open. Alternatives appended to `alts`.
void nonnegative_reals(Bound lo, std::optional<Bound> hi, std::vector<std::string>& alts) {
    // y = I + F, 0 <= F < 1. y >= L <=> I >= L. y > L <=> I >= L + 1, or I = L and F > 0.
    // y <= U <=> I <= U - 1, or I = U and F = 0. y < U <=> I <= U - 1.
    const std::int64_t i_lo = lo.value + (lo.exclusive ? 1 : 0);
    if (!hi) {
        alts.push_back(at_least(static_cast<std::uint64_t>(i_lo)) + " " + kFraction);
    } else if (i_lo <= hi->value - 1) {
        alts.push_back(nonnegative(static_cast<std::uint64_t>(i_lo), static_cast<std::uint64_t>(hi->value - 1)) +
                       " " + kFraction);
    }
    if (lo.exclusive && (!hi || lo.value < hi->value)) {
        alts.push_back("\"" + std::to_string(lo.value) + "\" " + kNonzeroFraction);
    }
    if (hi && !hi->exclusive && (hi->value > lo.value || (hi->value == lo.value && !lo.exclusive))) {
        alts.push_back("\"" + std::to_string(hi->value) + "\" " + kZeroFraction);
    }
}

}  // namespace

std::string number_range(std::optional<Bound> lo, std::optional<Bound> hi) {
    check_bound(lo);
    check_bound(hi);
    if (lo && hi && (lo->value > hi->value || (lo->value == hi->value && (lo->exclusive || hi->exclusive)))) {
        fail(empty_range_error("number"));
    }
    std::vector<std::string> alts;
    // Negative x = -y, y > 0: mirror the bounds (x <= hi <=> y >= -hi; x >= lo <=> y <= -lo).
    if (!lo || lo->value < 0) {
        Bound y_lo{0, true};  // y > 0 (no "-0")
        if (hi && hi->value < 0) y_lo = {-hi->value, hi->exclusive};
        std::optional<Bound> y_hi;
        if (lo) y_hi = Bound{-lo->value, lo->exclusive};
        std::vector<std::string> neg;
        nonnegative_reals(y_lo, y_hi, neg);
        if (!neg.empty()) alts.push_back("\"-\" " + join_alternatives(neg));
    }
    // Nonnegative x.
    if (!hi || hi->value > 0 || (hi->value == 0 && !hi->exclusive)) {
        Bound x_lo{0, false};
        if (lo && lo->value >= 0) x_lo = *lo;
        nonnegative_reals(x_lo, hi, alts);
    }
    if (alts.empty()) fail(empty_range_error("number"));
    return join_alternatives(alts);
}

}  // namespace ember::grammar

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

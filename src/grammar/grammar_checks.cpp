#include "grammar/grammar_checks.hpp"

#include <string>
#include <vector>

#include "runtime/fail.hpp"
#include "runtime/utf8.hpp"

namespace ember::grammar {
namespace {

// Calls f(alt_begin, alt_end) for every alternative of rule r (element index ranges).
template <class F>
void for_each_alternative(const Grammar& g, std::uint32_t r, F&& f) {
    std::size_t i = g.rule_start[r];
    while (true) {
        const std::size_t begin = i;
        while (!ends_sequence(g.elements[i].op)) ++i;
        f(begin, i);
        if (g.elements[i].op == Op::end) break;
        ++i;
    }
}

// Which rules can match the empty string: a worklist over "refs still unknown" counters, linear
// in the grammar size (a naive fixpoint is quadratic on long chains of rules).
std::vector<char> nullable_rules(const Grammar& g) {
    const std::size_t n_rules = g.rule_start.size();
    std::vector<char> nullable(n_rules, 0);
    struct Alt {
        std::uint32_t rule;
        std::uint32_t pending;
    };
    std::vector<Alt> alts;
    std::vector<std::vector<std::uint32_t>> uses(n_rules);  // rule -> alternatives naming it
    std::vector<std::uint32_t> work;
    for (std::uint32_t r = 0; r < n_rules; ++r) {
        for_each_alternative(g, r, [&](std::size_t b, std::size_t e) {
            std::uint32_t refs = 0;
            for (std::size_t i = b; i < e; ++i) {
                if (g.elements[i].op != Op::rule_ref) return;  // a terminal: never empty
                ++refs;
            }
            const auto alt = static_cast<std::uint32_t>(alts.size());
            alts.push_back({r, refs});
            for (std::size_t i = b; i < e; ++i) uses[g.elements[i].value].push_back(alt);
            if (refs == 0 && !nullable[r]) {
                nullable[r] = 1;
                work.push_back(r);
            }
        });
    }
    while (!work.empty()) {
        const std::uint32_t b = work.back();
        work.pop_back();
        for (std::uint32_t alt : uses[b]) {
            if (--alts[alt].pending == 0 && !nullable[alts[alt].rule]) {
                nullable[alts[alt].rule] = 1;
                work.push_back(alts[alt].rule);
            }
        }
    }
    return nullable;
}

}  // namespace

void check_left_recursion(const Grammar& g) {
    const std::size_t n_rules = g.rule_start.size();
    const std::vector<char> nullable = nullable_rules(g);

    // Edges a -> b: b can start a's match (after only nullable rules).
    std::vector<std::vector<std::uint32_t>> edges(n_rules);
    for (std::uint32_t r = 0; r < n_rules; ++r) {
        for_each_alternative(g, r, [&](std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i) {
                if (g.elements[i].op != Op::rule_ref) break;
                edges[r].push_back(g.elements[i].value);
                if (!nullable[g.elements[i].value]) break;
            }
        });
    }

    // Iterative depth-first search; a back edge is a left-recursive cycle.
    enum : char { unseen, open, done };
    std::vector<char> color(n_rules, unseen);
    struct Frame {
        std::uint32_t rule;
        std::size_t next_edge;
    };
    std::vector<Frame> stack;
    for (std::uint32_t start = 0; start < n_rules; ++start) {
        if (color[start] != unseen) continue;
        stack.push_back({start, 0});
        color[start] = open;
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (f.next_edge == edges[f.rule].size()) {
                color[f.rule] = done;
                stack.pop_back();
                continue;
            }
            const std::uint32_t to = edges[f.rule][f.next_edge++];
            if (color[to] == unseen) {
                color[to] = open;
                stack.push_back({to, 0});
            } else if (color[to] == open) {
                std::string cycle;
                bool in_cycle = false;
                for (const Frame& s : stack) {
                    in_cycle = in_cycle || s.rule == to;
                    if (in_cycle) cycle += g.rule_names[s.rule] + " -> ";
                }
                cycle += g.rule_names[to];
                fail("grammar: left recursion: " + cycle +
                     " (a rule must match some input before it recurses)");
            }
        }
    }
}

std::uint64_t fingerprint(const Grammar& g) {
    std::uint64_t h = 0xCBF29CE484222325ull;
    auto mix = [&h](std::uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xFF;
            h *= 0x100000001B3ull;
        }
    };
    mix(g.root);
    mix(g.rule_start.size());
    for (std::uint32_t s : g.rule_start) mix(s);
    mix(g.elements.size());
    for (const Element& e : g.elements) mix((static_cast<std::uint64_t>(e.op) << 32) | e.value);
    mix(g.classes.size());
    for (const CharClass& c : g.classes) {
        mix(c.ranges.size());
        for (const auto& [lo, hi] : c.ranges) mix((static_cast<std::uint64_t>(lo) << 32) | hi);
    }
    return h;
}

namespace {

void append_char(std::string& out, char32_t cp, bool in_class) {
    switch (cp) {
        case '\n': out += "\\n"; return;
        case '\r': out += "\\r"; return;
        case '\t': out += "\\t"; return;
        case '\\': out += "\\\\"; return;
        case '"': out += "\\\""; return;
        default: break;
    }
    if (in_class && (cp == ']' || cp == '[' || cp == '-' || cp == '^')) {
        out += '\\';
        out += static_cast<char>(cp);
    } else if (cp < 0x20 || cp == 0x7F || (cp >= 0xD800 && cp <= 0xDFFF)) {
        static const char* hex = "0123456789ABCDEF";
        if (cp < 0x100) {
            out += "\\x";
            out += hex[(cp >> 4) & 15];
            out += hex[cp & 15];
        } else {
            out += "\\u";
            for (int s = 12; s >= 0; s -= 4) out += hex[(cp >> s) & 15];
        }
    } else {
        append_utf8(out, cp);
    }
}

}  // namespace

std::string to_gbnf(const Grammar& g) {
    std::string out;
    for (std::uint32_t r = 0; r < g.rule_start.size(); ++r) {
        out += g.rule_names[r];
        out += " ::=";
        bool first_alt = true;
        for_each_alternative(g, r, [&](std::size_t b, std::size_t e) {
            if (!first_alt) out += " |";
            first_alt = false;
            for (std::size_t i = b; i < e;) {
                const Element& el = g.elements[i];
                out += ' ';
                if (el.op == Op::rule_ref) {
                    out += g.rule_names[el.value];
                    ++i;
                } else if (el.op == Op::chr) {
                    out += '"';
                    for (; i < e && g.elements[i].op == Op::chr; ++i) {
                        append_char(out, g.elements[i].value, false);
                    }
                    out += '"';
                } else {
                    out += '[';
                    for (const auto& [lo, hi] : g.classes[el.value].ranges) {
                        append_char(out, lo, true);
                        if (hi != lo) {
                            out += '-';
                            append_char(out, hi, true);
                        }
                    }
                    out += ']';
                    ++i;
                }
            }
        });
        out += '\n';
    }
    return out;
}

}  // namespace ember::grammar

// The matcher over multi-byte token pieces: the trie-scan mask against one-token-at-a-time
// checks, UTF-8 split across tokens, end of generation, state save/restore, the mask cache.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ember/error.hpp"
#include "grammar/grammar.hpp"
#include "grammar/matcher.hpp"
#include "grammar/token_trie.hpp"
#include "grammar_test_util.hpp"

using ember::Token;
using ember::grammar::Matcher;

namespace {

// A vocabulary of random pieces over a small alphabet that the test grammars care about,
// including multi-byte characters split at every byte, plus two end-of-generation tokens and
// two empty (control) tokens.
struct Vocab {
    std::vector<std::string> pieces;
    std::vector<std::uint8_t> eog;
    std::shared_ptr<const ember::grammar::TokenTrie> trie;
};

Vocab random_vocab(std::uint32_t seed, int n) {
    const std::vector<std::string> units = {"a", "b", "c", "{", "}", "[", "]", "\"", ":", ",", " ", "\n", "1", "0",
                                            "-", ".", "e", "t", "r", "u", "\\", "\xC3\xA9", "\xE2\x82\xAC",
                                            "\xF0\x9F\x98\x80", "\xC3", "\xA9", "\xE2", "\x82\xAC", "\xF0\x9F", "\x98\x80"};
    std::mt19937 rng(seed);
    Vocab v;
    v.pieces = {"", "", ""};  // 0, 1: control tokens; 2: EOG
    v.eog = {0, 0, 1};
    for (const auto& u : units) {
        v.pieces.push_back(u);
        v.eog.push_back(0);
    }
    while (static_cast<int>(v.pieces.size()) < n) {
        std::string p;
        const int len = 1 + static_cast<int>(rng() % 5);
        for (int i = 0; i < len; ++i) p += units[rng() % units.size()];
        v.pieces.push_back(p);  // duplicates are fine: two ids, one text
        v.eog.push_back(0);
    }
    v.pieces.push_back("");  // a second EOG at the end
    v.eog.push_back(1);
    v.trie = ember::grammar::build_token_trie(v.pieces, v.eog);
    return v;
}

Matcher make(std::string_view gbnf, const Vocab& v) {
    return Matcher(std::make_shared<const ember::grammar::Grammar>(ember::grammar::parse_gbnf(gbnf)), v.trie);
}

bool bit(std::span<const std::uint64_t> bits, Token t) {
    return (bits[static_cast<std::size_t>(t) >> 6] >> (t & 63)) & 1u;
}

const char* const kJsonish = R"gbnf(
root ::= value
value ::= obj | arr | str | num | "true" | "null"
obj ::= "{" ws (str ws ":" ws value ("," ws str ws ":" ws value)*)? ws "}"
arr ::= "[" ws (value ("," ws value)*)? ws "]"
str ::= "\"" ([^"\\] | "\\" ["\\nt])* "\""
num ::= "-"? [0-9]+ ("." [0-9]+)? ("e" [0-9]+)?
ws ::= [ \n]{0,3}
)gbnf";

}  // namespace

TEST_CASE("matcher: the trie-scan mask equals testing every token", "[grammar][matcher]") {
    const Vocab v = random_vocab(7, 3000);
    for (const char* g : {kJsonish, "root ::= [a-c\\u00e9\\u20ac]+ \"!\"?", "root ::= \"\\U0001F600\"+ \"a\"",
                          "root ::= ([^\"] | \"\\\"\")* \"\\\"\" [0-9]{2,3}"}) {
        Matcher m = make(g, v);
        std::mt19937 rng(11);
        for (int step = 0; step < 40; ++step) {
            const auto view = m.mask();
            const auto bits = std::vector<std::uint64_t>(view.begin(), view.end());
            std::vector<Token> allowed;
            for (Token t = 0; t < static_cast<Token>(v.pieces.size()); ++t) {
                const bool by_walk = m.allows(t);
                const bool by_mask = v.eog[static_cast<std::size_t>(t)] ? m.can_end() : bit(bits, t);
                INFO("grammar " << g << ", step " << step << ", token " << t << " '" << v.pieces[static_cast<std::size_t>(t)] << "'");
                REQUIRE(by_walk == by_mask);
                if (by_walk) allowed.push_back(t);
            }
            // Empty pieces are never allowed; EOG only at a complete match.
            CHECK_FALSE(m.allows(0));
            CHECK_FALSE(m.allows(1));
            CHECK(m.allows(2) == m.can_end());
            if (allowed.empty()) break;
            const Token next = allowed[rng() % allowed.size()];
            if (v.eog[static_cast<std::size_t>(next)]) break;
            m.accept(next);
        }
    }
}

TEST_CASE("matcher: a character split across tokens", "[grammar][matcher]") {
    const Vocab v = random_vocab(3, 200);
    Matcher m = make("root ::= \"a\" \"\\u00e9\" \"b\"", v);
    auto id = [&](const std::string& piece) {
        for (std::size_t i = 0; i < v.pieces.size(); ++i) {
            if (v.pieces[i] == piece && !v.eog[i]) return static_cast<Token>(i);
        }
        FAIL("no token " << piece);
        return Token{-1};
    };
    m.accept(id("a"));
    CHECK_FALSE(m.allows(id("\xE2")));  // starts a 3-byte character: cannot become U+00E9
    CHECK(m.allows(id("\xC3")));
    m.accept(id("\xC3"));
    CHECK_FALSE(m.can_end());
    CHECK_FALSE(m.allows(id("a")));      // the pending character needs its continuation byte
    CHECK_FALSE(m.allows(2));            // no end in the middle of a character
    CHECK(m.allows(id("\xA9")));
    m.accept(id("\xA9"));
    m.accept(id("b"));
    CHECK(m.can_end());
    CHECK(m.allows(2));
    m.accept(2);  // end of generation changes nothing
    CHECK(m.can_end());
    CHECK_THROWS_AS(m.accept(id("a")), ember::Error);
    CHECK(m.can_end());  // unchanged by the rejected token
}

TEST_CASE("matcher: accept rejects what the mask rejects and leaves the state unchanged", "[grammar][matcher]") {
    auto m = grammar_test::byte_matcher("root ::= \"ab\"");
    CHECK_THROWS_WITH(m.accept('b'), Catch::Contains("not allowed"));
    CHECK_THROWS_WITH(m.accept(grammar_test::kEog), Catch::Contains("before the grammar is complete"));
    CHECK_THROWS_AS(m.accept(-1), ember::Error);
    CHECK_THROWS_AS(m.allows(257), ember::Error);
    m.accept('a');
    m.accept('b');
    CHECK(m.can_end());
    m.reset();
    CHECK_FALSE(m.can_end());
    CHECK(m.allows('a'));
}

TEST_CASE("matcher: stacks round-trip through set_state, and bad states are refused", "[grammar][matcher]") {
    auto m = grammar_test::byte_matcher(kJsonish);
    for (char c : std::string("{\"k\": [1, {\"x\": \"\xC3")) m.accept(static_cast<unsigned char>(c));
    const auto stacks = m.stacks();
    const auto partial = m.partial();
    CHECK(partial.remain == 1);

    auto other = grammar_test::byte_matcher(kJsonish);
    other.set_state(stacks, partial);
    for (char c : std::string("\xA9\"}]}")) {
        const auto t = static_cast<Token>(static_cast<unsigned char>(c));
        REQUIRE(other.allows(t));
        REQUIRE(m.allows(t));
        other.accept(t);
        m.accept(t);
    }
    CHECK(other.can_end());
    CHECK(other.stacks() == m.stacks());

    const std::size_t n = m.grammar().elements.size();
    CHECK_THROWS_WITH(other.set_state({{static_cast<std::uint32_t>(n)}}, {}), Catch::Contains("out of range"));
    CHECK_THROWS_WITH(other.set_state({{0}}, {}), Catch::Contains("not a parse position"));
    CHECK_THROWS_WITH(other.set_state({}, {}), Catch::Contains("no stacks"));
    CHECK_THROWS_WITH(other.set_state(stacks, {5, 3, 2}), Catch::Contains("partial UTF-8"));
    CHECK(other.can_end());  // unchanged by the refused states
}

TEST_CASE("matcher: masks of repeated states come from the cache", "[grammar][matcher]") {
    const Vocab v = random_vocab(5, 1000);
    Matcher m = make("root ::= \"\\\"\" [a-c ]* \"\\\"\"", v);
    std::vector<Token> letters;
    for (std::size_t i = 0; i < v.pieces.size(); ++i) {
        if (v.pieces[i] == "a" || v.pieces[i] == "b" || v.pieces[i] == "\"") letters.push_back(static_cast<Token>(i));
    }
    m.accept(letters[2]);  // the opening quote
    auto copy = [&] {
        const auto bits = m.mask();
        return std::vector<std::uint64_t>(bits.begin(), bits.end());
    };
    const auto first = copy();
    for (int i = 0; i < 20; ++i) {
        m.accept(letters[static_cast<std::size_t>(i % 2)]);
        CHECK(copy() == first);
    }
    CHECK(m.masks_computed() == 1);
    CHECK(m.masks_cached() == 20);
}

TEST_CASE("matcher: deep nesting outgrows the buffers and compacts", "[grammar][matcher]") {
    // Each depth is a new state with new stack nodes: past the preallocated bounds the matcher
    // forgets its states and drops unreachable nodes, and matching goes on unchanged.
    auto m = grammar_test::byte_matcher("root ::= item+\nitem ::= \"(\" item* \")\"");
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 3000; ++i) m.accept('(');
        CHECK_FALSE(m.can_end());
        CHECK(m.stacks().front().size() > 3000);
        for (int i = 0; i < 3000; ++i) m.accept(')');
        REQUIRE(m.can_end());
        CHECK_FALSE(m.allows(')'));
    }
    CHECK(m.n_states() < 4096 + 8);
}

TEST_CASE("matcher: an ambiguous grammar hits the stack bound with an error", "[grammar][matcher][hostile]") {
    // Every "a" can close any number of the open optional groups: the number of distinct
    // stacks grows with the input until the bound stops it.
    auto m = grammar_test::byte_matcher("root ::= x\nx ::= \"a\" x? y?\ny ::= \"a\" | \"b\" x?");
    CHECK_THROWS_WITH(
        [&] {
            for (int i = 0; i < 10000; ++i) m.accept('a');
        }(),
        Catch::Contains("too ambiguous"));
}

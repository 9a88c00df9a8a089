// Session::generate: stop reasons, stop strings across token boundaries (held back, never
// emitted), on_token, UTF-8 streaming, and agreement with a hand-written token loop.
#include <catch2/catch.hpp>

#include "api/stop_strings.hpp"
#include "session_test_util.hpp"

using ember::GenerateOptions;
using ember::Session;
using ember::StopReason;
using ember::Token;
using session_test::gopts;
using session_test::sopts;
using session_test::stories;

namespace {

// Feeds pieces through StopStrings and returns the released text (with finish() when no match).
std::string run_stops(const std::vector<std::string>& stops, const std::vector<std::string>& pieces,
                      int* matched = nullptr, std::vector<std::string>* released = nullptr) {
    ember::detail::StopStrings s(stops);
    std::string out;
    int m = -1;
    for (const auto& p : pieces) {
        const auto step = s.push(p);
        out.append(step.released);
        if (released) released->emplace_back(step.released);
        if (step.matched >= 0) {
            m = step.matched;
            break;
        }
    }
    if (m < 0) out.append(s.finish());
    if (matched) *matched = m;
    return out;
}

}  // namespace

TEST_CASE("StopStrings: match inside one piece, across pieces, hold back partial prefixes", "[generate]") {
    int m = -2;
    CHECK(run_stops({"World"}, {"Hello World!"}, &m) == "Hello ");
    CHECK(m == 0);
    std::vector<std::string> rel;
    CHECK(run_stops({"World"}, {"Hello W", "or", "ld and more"}, &m, &rel) == "Hello ");
    CHECK(m == 0);
    REQUIRE(rel.size() == 3);
    CHECK(rel[0] == "Hello ");  // "W" held back
    CHECK(rel[1].empty());      // "Wor" held back
    CHECK(rel[2].empty());      // match: nothing after "Hello " is released
    // A partial prefix that turns out not to be a stop string is released.
    rel.clear();
    CHECK(run_stops({"World"}, {"Hello W", "ow"}, &m, &rel) == "Hello Wow");
    CHECK(m == -1);
    CHECK(rel[1] == "Wow");
    // Held text at the end comes out through finish().
    rel.clear();
    CHECK(run_stops({"World"}, {"Hello Wor"}, &m, &rel) == "Hello Wor");
    CHECK(rel[0] == "Hello ");
    // The earliest match among several stop strings wins; its index is reported.
    CHECK(run_stops({"c", "ab"}, {"xxab", "c"}, &m) == "xx");
    CHECK(m == 1);
    // Overlapping prefix: "aab" with stop "ab" (hold "a" twice).
    CHECK(run_stops({"ab"}, {"a", "a", "b"}, &m) == "a");
    CHECK(m == 0);
    // Empty stop strings are ignored; the index refers to the original list.
    CHECK(run_stops({"", "z"}, {"xyz"}, &m) == "xy");
    CHECK(m == 1);
    CHECK(run_stops({}, {"abc", "def"}, &m) == "abcdef");
    // Multi-byte UTF-8 in stop strings and text.
    CHECK(run_stops({"\xC3\xA9t\xC3\xA9"}, {"un \xC3\xA9", "t\xC3", "\xA9 chaud"}, &m) == "un ");
    CHECK(m == 0);
}

TEST_CASE("generate: greedy tokens equal a hand-written loop; max_tokens; text from the stream", "[generate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");

    Session a(model, sopts(256));
    ember::Sampler sa;
    REQUIRE(a.prefill(prompt) == ember::Status::ok);
    const auto expected = session_test::manual_loop(a, sa, 40);
    REQUIRE(expected.size() == 40);

    Session b(model, sopts(256));
    ember::Sampler sb;
    REQUIRE(b.prefill(prompt) == ember::Status::ok);
    std::vector<Token> seen;
    std::string streamed;
    const auto r = b.generate(sb, gopts(40, {}, [&](Token t, std::string_view text) {
                                       seen.push_back(t);
                                       streamed.append(text);
                                       return true;
                                   }));
    CHECK(r.stop_reason == StopReason::max_tokens);
    CHECK(r.status == ember::Status::ok);
    CHECK(r.tokens == expected);
    CHECK(seen == expected);
    CHECK(r.text == streamed);
    CHECK(r.text == model.detokenize(expected));  // no leading BOS: the pieces concatenated
    // Every generated token is in the session, and the logits predict what follows.
    CHECK(b.n_past() == static_cast<int>(prompt.size() + expected.size()));
    CHECK(std::equal(expected.begin(), expected.end(), b.tokens().end() - 40));
    CHECK(session_test::max_abs_diff(a.logits(), b.logits()) == 0.0f);

    // generate continues where the last call stopped.
    const auto r2 = b.generate(sb, gopts(10));
    const auto expected2 = session_test::manual_loop(a, sa, 10);
    CHECK(r2.tokens == expected2);

    // max_tokens 0 does nothing.
    const auto r0 = b.generate(sb, gopts(0));
    CHECK(r0.tokens.empty());
    CHECK(r0.stop_reason == StopReason::max_tokens);
}

TEST_CASE("generate: stop string across token boundaries is never emitted", "[generate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");
    Session ref(model, sopts(256));
    ember::Sampler sr;
    REQUIRE(ref.prefill(prompt) == ember::Status::ok);
    const auto full = ref.generate(sr, gopts(60));
    REQUIRE(full.tokens.size() == 60);

    // Pick a stop string that starts inside token k and ends inside token k + 2.
    std::vector<std::size_t> ends;  // end offset of each token's text in full.text
    std::size_t at = 0;
    for (Token t : full.tokens) {
        at += model.token_to_piece(t).size();
        ends.push_back(at);
    }
    REQUIRE(at == full.text.size());
    std::size_t k = 5;
    while (k + 3 < ends.size() && !(ends[k] - ends[k - 1] >= 2 && ends[k + 2] - ends[k + 1] >= 2)) ++k;
    REQUIRE(k + 3 < ends.size());
    const std::size_t begin = ends[k - 1] + 1, end = ends[k + 1] + 1;
    const std::string stop = full.text.substr(begin, end - begin);
    const std::size_t first = full.text.find(stop);
    REQUIRE(first <= begin);

    Session s(model, sopts(256));
    ember::Sampler ss;
    REQUIRE(s.prefill(prompt) == ember::Status::ok);
    std::string streamed;
    int calls = 0;
    const auto r = s.generate(ss, gopts(60, {"never-appears", stop}, [&](Token, std::string_view text) {
                                       ++calls;
                                       streamed.append(text);
                                       CHECK(text.find(stop) == std::string_view::npos);
                                       return true;
                                   }));
    CHECK(r.stop_reason == StopReason::stop_string);
    CHECK(r.stop_string == stop);
    CHECK(r.text == full.text.substr(0, first));
    CHECK(streamed == r.text);
    CHECK(streamed.find(stop) == std::string::npos);
    // The token that completed the stop string was generated and decoded (llama.cpp keeps it).
    const std::size_t n_tok = static_cast<std::size_t>(
        std::lower_bound(ends.begin(), ends.end(), first + stop.size()) - ends.begin() + 1);
    CHECK(r.tokens.size() == n_tok);
    CHECK(calls == static_cast<int>(n_tok));
    CHECK(s.n_past() == static_cast<int>(prompt.size() + n_tok));
}

TEST_CASE("generate: a held-back prefix is released at max_tokens and at end of generation", "[generate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");
    Session ref(model, sopts(256));
    ember::Sampler sr;
    REQUIRE(ref.prefill(prompt) == ember::Status::ok);
    const auto full = ref.generate(sr, gopts(12));
    // A stop string whose start is the last character generated but which does not continue.
    const std::string stop = full.text.substr(full.text.size() - 1) + "\x01\x02";

    Session s(model, sopts(256));
    ember::Sampler ss;
    REQUIRE(s.prefill(prompt) == ember::Status::ok);
    std::vector<std::pair<Token, std::string>> calls;
    const auto r = s.generate(ss, gopts(12, {stop}, [&](Token t, std::string_view x) {
                                       calls.emplace_back(t, std::string(x));
                                       return true;
                                   }));
    CHECK(r.stop_reason == StopReason::max_tokens);
    CHECK(r.text == full.text);
    REQUIRE(calls.size() == 12);  // released with the last token, no extra call
    CHECK(calls.back().second.back() == full.text.back());

    // End of generation: ban nothing, but make the EOS token win after a few tokens by bias.
    Session e(model, sopts(256));
    REQUIRE(e.prefill(prompt) == ember::Status::ok);
    ember::Sampler greedy;
    const auto first3 = e.generate(greedy, gopts(3));
    ember::Sampler eos_sampler = session_test::greedy_sampler({{model.eos(), 1000.0f}});
    calls.clear();
    const std::string stop2 = first3.text.substr(first3.text.size() - 1);
    Session e2(model, sopts(256));
    REQUIRE(e2.prefill(prompt) == ember::Status::ok);
    ember::Sampler greedy2;
    // First three tokens with a stop string that holds back their last character...
    const auto part = e2.generate(greedy2, gopts(3, {stop2 + "\x01"}));
    CHECK(part.text == first3.text);
    // ... then a call that immediately ends with EOS: nothing generated, nothing held.
    const auto end = e2.generate(eos_sampler, gopts(5, {}, [&](Token t, std::string_view x) {
                                                 calls.emplace_back(t, std::string(x));
                                                 return true;
                                             }));
    CHECK(end.stop_reason == StopReason::eog);
    CHECK(end.tokens.empty());
    CHECK(calls.empty());
    CHECK(e2.n_past() == static_cast<int>(prompt.size() + 3));  // EOS is not decoded
}

TEST_CASE("generate: end of generation with held text delivers it with kNoToken", "[generate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");
    const Token t0 = 400;  // any ordinary token; forced first by a bias
    REQUIRE(t0 != model.eos());
    const std::string piece = model.token_to_piece(t0);
    REQUIRE(!piece.empty());
    // t0 wins the first step by its bias; the presence penalty then removes it and EOS (biased
    // above every natural logit) wins the second step.
    ember::SamplerOptions o;
    o.temperature = 0.0f;
    o.logit_bias = {{t0, 1000.0f}, {model.eos(), 500.0f}};
    o.presence_penalty = 1e6f;
    ember::Sampler sampler(o);
    Session s(model, sopts(64));
    REQUIRE(s.prefill(prompt) == ember::Status::ok);
    std::vector<std::pair<Token, std::string>> calls;
    const auto r = s.generate(sampler, gopts(10, {piece.substr(piece.size() - 1) + "\x01"}, [&](Token t, std::string_view x) {
                                            calls.emplace_back(t, std::string(x));
                                            return true;
                                        }));
    CHECK(r.stop_reason == StopReason::eog);
    CHECK(r.tokens == std::vector<Token>{t0});
    CHECK(r.text == piece);
    REQUIRE(calls.size() == 2);
    CHECK(calls[0].first == t0);
    CHECK(calls[0].second == piece.substr(0, piece.size() - 1));  // last byte held back
    CHECK(calls[1].first == ember::kNoToken);
    CHECK(calls[1].second == piece.substr(piece.size() - 1));
    CHECK(s.n_past() == static_cast<int>(prompt.size() + 1));  // EOS is not decoded
}

TEST_CASE("generate: on_token returning false stops; context_full without shift; no logits throws", "[generate]") {
    EMBER_REQUIRE_SHARED(session_test::kModel);
    const auto& model = stories();
    const auto prompt = model.tokenize("Once upon a time");
    Session s(model, sopts(32));
    ember::Sampler sampler;
    CHECK_THROWS_AS(s.generate(sampler, {}), ember::Error);
    REQUIRE(s.prefill(prompt) == ember::Status::ok);
    int n = 0;
    auto r = s.generate(sampler, gopts(20, {}, [&](Token, std::string_view) {
                                      return ++n < 3;
                                  }));
    CHECK(r.stop_reason == StopReason::cancelled);
    CHECK(r.status == ember::Status::ok);
    CHECK(r.tokens.size() == 3);
    CHECK(s.n_past() == static_cast<int>(prompt.size() + 3));
    CHECK_FALSE(r.last_token_pending);

    r = s.generate(sampler, {});
    CHECK(r.stop_reason == StopReason::context_full);
    CHECK(r.status == ember::Status::context_full);
    CHECK(s.n_past() == 32);
    CHECK(r.tokens.size() == static_cast<std::size_t>(32 - prompt.size() - 3));
    CHECK(s.decode(r.tokens.back()) == ember::Status::context_full);
}

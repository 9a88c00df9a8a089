// beam_search: the shared reference (an independent float64 implementation), an oracle that
// follows the stated semantics with fresh sessions and a full sort, the tie rules, options,
// thread-count invariance and KV sharing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "decoding/beam_core.hpp"
#include "decoding_test_util.hpp"

using decoding_test::session_after;
using decoding_test::stories;
using ember::Token;

namespace {

ember::BeamSearchOptions bopts(int beams, int max_tokens, int n_best = 1, float length_penalty = 0.0f) {
    ember::BeamSearchOptions o;
    o.beams = beams;
    o.max_tokens = max_tokens;
    o.n_best = n_best;
    o.length_penalty = length_penalty;
    return o;
}

// The semantics, written out plainly: logits of each hypothesis from a fresh session given the
// prompt and its tokens, log-softmax in long double, every extension sorted.
struct OracleResult {
    std::vector<Token> tokens;
    long double logprob = 0;
    bool done = false;
};

OracleResult oracle(const std::string& prompt, int beams, int steps) {
    struct Hyp {
        std::vector<Token> tokens;
        long double logprob;
        bool done;
    };
    const auto& model = stories();
    const std::vector<Token> prompt_ids = model.tokenize(prompt);
    std::vector<Hyp> live{{{}, 0.0L, false}}, finished;
    struct Ext {
        long double logprob;
        Token token;
        std::size_t hyp;
    };
    for (int step = 0; step < steps && !live.empty(); ++step) {
        std::vector<Ext> all;
        for (std::size_t h = 0; h < live.size(); ++h) {
            std::vector<Token> ids = prompt_ids;
            ids.insert(ids.end(), live[h].tokens.begin(), live[h].tokens.end());
            ember::SessionOptions so;
            so.context = 256;
            so.threads = 1;
            ember::Session s(model, so);
            s.prefill(ids);
            const auto logits = s.logits();
            long double max = -INFINITY, sum = 0;
            for (float l : logits) max = std::max<long double>(max, l);
            for (float l : logits) sum += std::exp(static_cast<long double>(l) - max);
            const long double lse = max + std::log(sum);
            for (std::size_t t = 0; t < logits.size(); ++t) {
                all.push_back({live[h].logprob + (static_cast<long double>(logits[t]) - lse), static_cast<Token>(t), h});
            }
        }
        std::sort(all.begin(), all.end(), [](const Ext& a, const Ext& b) {
            if (a.logprob != b.logprob) return a.logprob > b.logprob;
            if (a.token != b.token) return a.token < b.token;
            return a.hyp < b.hyp;
        });
        std::vector<Hyp> next;
        for (std::size_t i = 0; i < static_cast<std::size_t>(beams) && i < all.size(); ++i) {
            Hyp h = live[all[i].hyp];
            h.logprob = all[i].logprob;
            if (model.is_end_of_generation(all[i].token)) {
                h.done = true;
                finished.push_back(h);
            } else {
                h.tokens.push_back(all[i].token);
                next.push_back(h);
            }
        }
        live = std::move(next);
    }
    OracleResult r;
    finished.insert(finished.end(), live.begin(), live.end());
    const Hyp* win = &finished.front();
    for (const Hyp& h : finished) {
        if (h.logprob > win->logprob) win = &h;
    }
    r.tokens = win->tokens;
    r.logprob = win->logprob;
    r.done = win->done;
    return r;
}

}  // namespace

TEST_CASE("beam_search matches the float64 reference for every case of the shared file", "[beam]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    EMBER_REQUIRE_SHARED(decoding_test::kBeamReference);
    const auto cases = decoding_test::read_beam_cases(ember_test::shared_file(decoding_test::kBeamReference).string());
    REQUIRE(cases.size() == 4);
    for (const auto& c : cases) {
        INFO(c.prompt << " beams " << c.beams);
        REQUIRE(c.model == "stories260K.gguf");
        ember::Session s = session_after(c.prompt);
        const auto r = ember::beam_search(s, bopts(c.beams, c.n));
        CHECK(r.best.tokens == c.ids);
        CHECK(std::abs(r.best.logprob - c.logprob) < 1e-3);
        CHECK(c.prompt + r.best.text == c.text);
        CHECK(r.status == ember::Status::ok);
        CHECK(r.stats.steps == c.n - 1);  // the last step's tokens need no pass
    }
}

TEST_CASE("beam_search agrees with a plain oracle of the semantics on stories260K", "[beam]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    for (const std::string prompt : {"The little dog", "Once upon a time, there was a cat. The cat was happy."}) {
        for (int beams : {1, 3, 5}) {
            INFO(prompt << " beams " << beams);
            const OracleResult want = oracle(prompt, beams, 6);
            ember::Session s = session_after(prompt);
            const auto r = ember::beam_search(s, bopts(beams, 6));
            CHECK(r.best.tokens == want.tokens);
            CHECK(r.best.done == want.done);
            CHECK(std::abs(r.best.logprob - static_cast<double>(want.logprob)) < 1e-9);
        }
    }
}

namespace {

// A synthetic model whose next-token logits are small integers hashed from the history, with
// end-of-generation tokens (0 and 5) likely: hypotheses end often, and sums tie often.
constexpr int kVocab = 7;
bool synthetic_eog(Token t) { return t == 0 || t == 5; }
std::vector<float> synthetic_logits(const std::vector<Token>& history) {
    std::uint64_t h = 1469598103934665603ull;
    for (Token t : history) h = (h ^ static_cast<std::uint64_t>(t + 1)) * 1099511628211ull;
    std::vector<float> l(kVocab);
    for (int t = 0; t < kVocab; ++t) l[static_cast<std::size_t>(t)] = static_cast<float>((h >> (3 * t)) % 3);
    return l;
}

class SyntheticModel final : public ember::decoding::BeamModel {
public:
    explicit SyntheticModel(int cancel_at = -1) : cancel_at_(cancel_at) {}
    std::span<const float> logits(std::size_t h) override {
        rows_[h] = synthetic_logits(live_[h]);
        return rows_[h];
    }
    bool advance(std::span<const std::size_t> parents, std::span<const Token> tokens, bool run) override {
        std::vector<std::vector<Token>> next;
        for (std::size_t i = 0; i < parents.size(); ++i) {
            next.push_back(live_[parents[i]]);
            next.back().push_back(tokens[i]);
        }
        live_ = std::move(next);
        rows_.assign(live_.size(), {});
        runs += run ? 1 : 0;
        return ++steps != cancel_at_;
    }
    bool is_end_of_generation(Token t) const override { return synthetic_eog(t); }
    int steps = 0, runs = 0;

private:
    int cancel_at_;
    std::vector<std::vector<Token>> live_{{}};
    std::vector<std::vector<float>> rows_{{}};
};

// The semantics over synthetic_logits, plainly: every extension, fully sorted.
std::vector<ember::decoding::RawHypothesis> synthetic_oracle(std::size_t beams, int steps) {
    using ember::decoding::RawHypothesis;
    std::vector<RawHypothesis> live(1), done;
    for (int step = 0; step < steps && !live.empty(); ++step) {
        struct Ext {
            double logprob;
            Token token;
            std::size_t hyp;
        };
        std::vector<Ext> all;
        for (std::size_t h = 0; h < live.size(); ++h) {
            const auto l = synthetic_logits(live[h].tokens);
            const double max = *std::max_element(l.begin(), l.end());
            double sum = 0;
            for (float x : l) sum += std::exp(static_cast<double>(x) - max);
            const double lse = max + std::log(sum);
            for (int t = 0; t < kVocab; ++t) all.push_back({live[h].logprob + (l[static_cast<std::size_t>(t)] - lse), t, h});
        }
        std::sort(all.begin(), all.end(), [](const Ext& a, const Ext& b) {
            return a.logprob != b.logprob ? a.logprob > b.logprob : a.token != b.token ? a.token < b.token : a.hyp < b.hyp;
        });
        std::vector<RawHypothesis> next;
        for (std::size_t i = 0; i < beams && i < all.size(); ++i) {
            RawHypothesis h = live[all[i].hyp];
            h.logprob = all[i].logprob;
            if (synthetic_eog(all[i].token)) {
                h.done = true;
                done.push_back(h);
            } else {
                h.tokens.push_back(all[i].token);
                next.push_back(h);
            }
        }
        live = std::move(next);
    }
    done.insert(done.end(), live.begin(), live.end());
    return done;
}

}  // namespace

TEST_CASE("beam search loop: end of generation, ties and the end match an oracle (synthetic model)", "[beam]") {
    int done_seen = 0, ties_seen = 0;
    for (std::size_t beams : {1u, 2u, 3u, 4u, 8u}) {
        for (int steps : {1, 2, 5, 9}) {
            INFO("beams " << beams << " steps " << steps);
            SyntheticModel model;
            const auto got = ember::decoding::run_beam_search(model, beams, steps);
            const auto want = synthetic_oracle(beams, steps);
            CHECK(!got.cancelled);
            REQUIRE(got.hypotheses.size() == want.size());
            for (std::size_t i = 0; i < want.size(); ++i) {
                CHECK(got.hypotheses[i].tokens == want[i].tokens);
                CHECK(got.hypotheses[i].done == want[i].done);
                CHECK(got.hypotheses[i].logprob == want[i].logprob);
                done_seen += want[i].done ? 1 : 0;
                if (i > 0 && want[i].logprob == want[i - 1].logprob) ties_seen += 1;
            }
            CHECK(model.runs <= steps - 1);  // the last step's tokens are never run
        }
    }
    CHECK(done_seen > 10);  // the cases exercise hypotheses that end...
    CHECK(ties_seen > 0);   // ...and equal sums
}

TEST_CASE("beam search loop: a cancelled pass ends the search with what it has", "[beam]") {
    SyntheticModel model(/*cancel_at=*/3);
    const auto got = ember::decoding::run_beam_search(model, 3, 10);
    CHECK(got.cancelled);
    CHECK(model.steps == 3);
    for (const auto& h : got.hypotheses) CHECK(h.tokens.size() <= 3);
}

TEST_CASE("beam selection breaks ties toward the lower token id, then the earlier hypothesis", "[beam]") {
    // Two hypotheses with equal sums and identical flat rows: every extension ties.
    const std::vector<float> flat(5, 0.0f);
    std::vector<ember::decoding::Extension> row;
    const std::vector<double> sums = {-1.0, -1.0};
    auto chosen = ember::decoding::select_beams(sums, [&](std::size_t) { return std::span<const float>(flat); }, 3, row);
    REQUIRE(chosen.size() == 3);
    CHECK((chosen[0].token == 0 && chosen[0].hyp == 0));
    CHECK((chosen[1].token == 0 && chosen[1].hyp == 1));
    CHECK((chosen[2].token == 1 && chosen[2].hyp == 0));
    // A better sum wins over a lower id; a row's logits rank by log-softmax plus the sum.
    const std::vector<float> a = {0.0f, 2.0f, 0.0f}, b = {5.0f, 5.0f, 5.0f};
    const std::vector<double> sums2 = {0.0, -0.5};
    chosen = ember::decoding::select_beams(
        sums2, [&](std::size_t h) { return std::span<const float>(h == 0 ? a : b); }, 2, row);
    REQUIRE(chosen.size() == 2);
    CHECK((chosen[0].token == 1 && chosen[0].hyp == 0));  // log(e^2 / (e^2 + 2)) ~ -0.24
    // Row b's -0.5 - log 3 = -1.60 ranks ahead of row a's other tokens (-2.24).
    CHECK((chosen[1].token == 0 && chosen[1].hyp == 1));
    CHECK(chosen[1].logprob == Approx(-0.5 - std::log(3.0)));
    // Fewer extensions than beams: all of them.
    chosen = ember::decoding::select_beams(sums, [&](std::size_t) { return std::span<const float>(flat); }, 50, row);
    CHECK(chosen.size() == 10);
    const std::vector<float> bad = {0.0f, NAN};
    CHECK_THROWS_AS(ember::decoding::select_beams(sums, [&](std::size_t) { return std::span<const float>(bad); }, 2, row),
                    ember::Error);
}

TEST_CASE("beam_search: n_best, length penalty, stats, and the session left unchanged", "[beam]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    ember::Session s = session_after("Once upon a time");
    const std::vector<Token> before(s.tokens());
    const std::vector<float> logits_before(s.logits().begin(), s.logits().end());
    const auto r = ember::beam_search(s, bopts(4, 12, 4));
    CHECK(s.tokens() == before);
    CHECK(std::equal(logits_before.begin(), logits_before.end(), s.logits().begin()));
    REQUIRE(r.hypotheses.size() == 4);
    CHECK(r.hypotheses.front().tokens == r.best.tokens);
    for (std::size_t i = 1; i < r.hypotheses.size(); ++i) {
        CHECK(r.hypotheses[i - 1].score >= r.hypotheses[i].score);
        CHECK(r.hypotheses[i].tokens != r.hypotheses[0].tokens);
    }
    for (const auto& h : r.hypotheses) CHECK(h.score == h.logprob);
    // Every hypothesis's logprob is its tokens' log-probabilities summed (scored by a session).
    for (const auto& h : r.hypotheses) {
        ember::Session check = session_after("Once upon a time");
        double sum = 0.0;
        for (Token t : h.tokens) {
            sum += ember::logprobs(check.logits(), t).logprob;
            REQUIRE(check.decode(t) == ember::Status::ok);
        }
        if (h.done) sum += ember::logprobs(check.logits(), stories().eos()).logprob;
        CHECK(h.logprob == Approx(sum).margin(1e-4));
    }
    // KV: 4 hypotheses fork the prompt's pages; shared partial blocks are copied on write.
    CHECK(r.stats.rows <= 4 * r.stats.steps);
    CHECK(r.stats.kv_blocks_shared > 0);
    CHECK(r.stats.kv_blocks_copied > 0);
    // At most one page per layer and row: a hypothesis copies only the block it writes to.
    CHECK(r.stats.kv_blocks_copied <= r.stats.rows * stories().info().n_layer);
    // A length penalty only rescores: logprob / n^alpha.
    const auto p = ember::beam_search(s, bopts(4, 12, 4, 1.0f));
    for (const auto& h : p.hypotheses) {
        const double n = static_cast<double>(h.tokens.size()) + (h.done ? 1.0 : 0.0);
        CHECK(h.score == Approx(h.logprob / n));
    }
}

TEST_CASE("beam_search results do not depend on the thread count", "[beam]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    ember::Session one = session_after("The little dog", 1);
    ember::Session three = session_after("The little dog", 3);
    const auto a = ember::beam_search(one, bopts(4, 20, 4));
    const auto b = ember::beam_search(three, bopts(4, 20, 4));
    REQUIRE(a.hypotheses.size() == b.hypotheses.size());
    for (std::size_t i = 0; i < a.hypotheses.size(); ++i) {
        CHECK(a.hypotheses[i].tokens == b.hypotheses[i].tokens);
        CHECK(a.hypotheses[i].logprob == b.hypotheses[i].logprob);
    }
}

TEST_CASE("beam_search rejects bad options and sessions with a clear error", "[beam]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    ember::Session s = session_after("Once upon a time", 1, 64);
    using Catch::Matchers::Contains;
    CHECK_THROWS_WITH(ember::beam_search(s, bopts(0, 8)), Contains("beams must be in [1, 256]"));
    CHECK_THROWS_WITH(ember::beam_search(s, bopts(257, 8)), Contains("beams must be in [1, 256]"));
    CHECK_THROWS_WITH(ember::beam_search(s, bopts(2, 0)), Contains("max_tokens must be >= 1"));
    CHECK_THROWS_WITH(ember::beam_search(s, bopts(2, 8, 0)), Contains("n_best"));
    CHECK_THROWS_WITH(ember::beam_search(s, bopts(2, 8, 3)), Contains("n_best"));
    CHECK_THROWS_WITH(ember::beam_search(s, bopts(2, 8, 1, NAN)), Contains("length_penalty"));
    CHECK_THROWS_WITH(ember::beam_search(s, bopts(2, 1 << 30)), Contains("do not fit in the context of 64"));
    // The prompt (5 tokens) and 59 more fit in 64 positions; the 60th token is never run.
    CHECK_NOTHROW(ember::beam_search(s, bopts(2, 60)));
    CHECK_THROWS_WITH(ember::beam_search(s, bopts(2, 61)), Contains("do not fit"));
    ember::Session empty(stories(), {});
    CHECK_THROWS_WITH(ember::beam_search(empty, bopts(2, 8)), Contains("prefill a prompt first"));
}

TEST_CASE("beam_search stops at the session's cancel callback with the best so far", "[beam]") {
    EMBER_REQUIRE_SHARED(decoding_test::kModel);
    ember::Session s = session_after("Once upon a time");
    int polls = 0;
    s.set_cancel_callback([&] { return ++polls > 12; });  // stories260K polls once per layer and pass
    const auto r = ember::beam_search(s, bopts(2, 32));
    CHECK(r.status == ember::Status::cancelled);
    CHECK(!r.best.tokens.empty());
    CHECK(r.best.tokens.size() < 32);
}

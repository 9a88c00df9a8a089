// ember::Sampler: option checks, buffers sized once per vocabulary, and the stage chain.
#include "ember/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "api/model_impl.hpp"
#include "ember/grammar.hpp"
#include "ember/model.hpp"
#include "grammar/grammar.hpp"
#include "grammar/matcher.hpp"
#include "runtime/fail.hpp"
#include "sampling/penalty_history.hpp"
#include "sampling/rng.hpp"
#include "sampling/sampler_state.hpp"
#include "sampling/stages.hpp"

namespace ember {
namespace {

constexpr std::uint64_t kRandomSeed = 0xFFFFFFFFu;

const std::vector<SamplerStage> kDefaultOrder = {
    SamplerStage::logit_bias, SamplerStage::penalties, SamplerStage::top_k,
    SamplerStage::typical_p,  SamplerStage::top_p,     SamplerStage::min_p,
    SamplerStage::temperature,
};

std::uint64_t random_seed() {
    std::uint64_t s = static_cast<std::uint64_t>(
        std::chrono::high_resolution_clock::now().time_since_epoch().count());
    try {
        std::random_device rd;
        s ^= (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    } catch (...) {
        // No entropy source: the clock alone will do for a "random" seed.
    }
    return s;
}

void check_finite(float v, const char* name) {
    if (!std::isfinite(v)) fail(std::string("SamplerOptions: ") + name + " is " + std::to_string(v) + ", not a finite number");
}

// Runs before anything is allocated (the penalty window is sized from the options).
const SamplerOptions& validate(const SamplerOptions& o) {
    check_finite(o.temperature, "temperature");
    check_finite(o.top_p, "top_p");
    check_finite(o.min_p, "min_p");
    check_finite(o.typical_p, "typical_p");
    check_finite(o.repeat_penalty, "repeat_penalty");
    check_finite(o.frequency_penalty, "frequency_penalty");
    check_finite(o.presence_penalty, "presence_penalty");
    if (!(o.repeat_penalty > 0.0f)) {
        fail("SamplerOptions: repeat_penalty must be positive, got " + std::to_string(o.repeat_penalty));
    }
    if (o.penalty_last_n < 0 || o.penalty_last_n > kMaxPenaltyWindow) {
        fail("SamplerOptions: penalty_last_n must be in [0, " + std::to_string(kMaxPenaltyWindow) + "], got " +
             std::to_string(o.penalty_last_n));
    }
    if (!o.grammar.empty() && !o.json_schema.empty()) {
        fail("SamplerOptions: set grammar or json_schema, not both");
    }
    for (const auto& [token, bias] : o.logit_bias) {
        if (token < 0) fail("SamplerOptions: logit_bias has negative token " + std::to_string(token));
        if (std::isnan(bias) || bias == std::numeric_limits<float>::infinity()) {
            fail("SamplerOptions: logit_bias for token " + std::to_string(token) +
                 " must be a number below +INFINITY");
        }
    }
    return o;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

// Throws for a NaN or +INFINITY logit (one branch-free pass; the search only on failure).
void check_logits(std::span<const float> logits) {
    bool bad = false;
    for (float v : logits) bad |= !(v < kInf);
    if (!bad) return;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        const float v = logits[i];
        if (!(v < kInf)) {
            fail("Sampler::sample: logit of token " + std::to_string(i) + " is " +
                 (std::isnan(v) ? "NaN" : "+INFINITY"));
        }
    }
}

bool contains(const std::vector<SamplerStage>& order, SamplerStage stage) {
    for (SamplerStage s : order) {
        if (s == stage) return true;
    }
    return false;
}

// The grammar matcher for the options, or none. Needs the model for the vocabulary.
std::unique_ptr<grammar::Matcher> make_matcher(const SamplerOptions& o, const Model* model) {
    if (o.grammar.empty() && o.json_schema.empty()) return nullptr;
    if (!model) {
        fail("SamplerOptions: a grammar or JSON Schema needs the model's vocabulary; construct the "
             "sampler with Sampler(model, options)");
    }
    const std::string text = o.grammar.empty() ? json_schema_to_grammar(o.json_schema) : o.grammar;
    auto g = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(text));
    return std::make_unique<grammar::Matcher>(std::move(g), detail::ModelAccess::impl(*model)->grammar_vocab());
}

}  // namespace

struct Sampler::Impl {
    SamplerOptions options;
    std::vector<SamplerStage> order;
    bool greedy = false;
    bool penalties_on = false;
    std::uint64_t seed = 0;
    sampling::Rng rng;
    sampling::PenaltyHistory history;
    SampleInfo info;

    // Sized for the vocabulary by the first sample() call.
    std::size_t n_vocab = 0;
    std::vector<SampleCandidate> candidates;
    std::size_t n_candidates = 0;
    std::vector<float> dense_bias;
    std::vector<std::int32_t> counts;
    std::vector<sampling::TypicalScratch::Scored> typical_scored;
    std::vector<SampleCandidate> typical_reordered;
    std::vector<float> greedy_logits;
    std::unique_ptr<grammar::Matcher> matcher;
    std::vector<double> dense_q;  // speculative sampling: the draft distribution by token, zeroed

    Impl(SamplerOptions o, const Model* model)
        : options(validate(o) /* before the history is sized */),
          history(static_cast<std::size_t>(options.penalty_last_n)) {
        matcher = make_matcher(options, model);
        order = options.order.empty() ? kDefaultOrder : options.order;
        if (matcher && !contains(order, SamplerStage::grammar)) {
            order.insert(order.begin(), SamplerStage::grammar);
        }
        greedy = !(options.temperature > 0.0f);
        penalties_on = options.penalty_last_n > 0 &&
                       !(options.repeat_penalty == 1.0f && options.frequency_penalty == 0.0f &&
                         options.presence_penalty == 0.0f) &&
                       contains(order, SamplerStage::penalties);
        seed = options.seed == kRandomSeed ? random_seed() : options.seed;
        rng.reseed(seed);
    }

    void size_for(std::size_t n) {
        if (matcher && n != matcher->vocab().n_vocab) {
            fail("Sampler::sample: " + std::to_string(n) + " logits for a grammar over a vocabulary of " +
                 std::to_string(matcher->vocab().n_vocab) + " tokens");
        }
        for (const auto& [token, bias] : options.logit_bias) {
            if (static_cast<std::size_t>(token) >= n) {
                fail("Sampler::sample: logit_bias token " + std::to_string(token) +
                     " is outside the vocabulary of " + std::to_string(n) + " tokens");
            }
        }
        candidates.assign(greedy ? 1 : n, SampleCandidate{});
        n_candidates = 0;
        dense_bias.clear();
        if (!greedy && !options.logit_bias.empty() && contains(order, SamplerStage::logit_bias)) {
            dense_bias.assign(n, 0.0f);
            for (const auto& [token, bias] : options.logit_bias) dense_bias[token] += bias;
        }
        counts.clear();
        if (penalties_on) counts.assign(n, 0);
        greedy_logits.clear();
        if (greedy) greedy_logits.resize(n);
        dense_q.clear();
        typical_scored.clear();
        typical_reordered.clear();
        if (!greedy && options.typical_p < 1.0f && contains(order, SamplerStage::typical_p)) {
            typical_scored.resize(n);
            typical_reordered.resize(n);
        }
        n_vocab = n;
    }

    // One stage of the sampled (non-greedy) chain.
    void run_stage(SamplerStage stage, sampling::CandidateArray& cur) {
        switch (stage) {
            case SamplerStage::logit_bias:
                sampling::apply_logit_bias(cur, options.logit_bias, dense_bias);
                break;
            case SamplerStage::penalties:
                if (penalties_on) {
                    sampling::apply_penalties(cur, history,
                                              {options.repeat_penalty, options.frequency_penalty,
                                               options.presence_penalty},
                                              counts);
                }
                break;
            case SamplerStage::top_k:
                sampling::apply_top_k(cur, options.top_k);
                break;
            case SamplerStage::typical_p:
                sampling::apply_typical_p(cur, options.typical_p,
                                          {typical_scored, typical_reordered});
                break;
            case SamplerStage::top_p:
                sampling::apply_top_p(cur, options.top_p);
                break;
            case SamplerStage::min_p:
                sampling::apply_min_p(cur, options.min_p);
                break;
            case SamplerStage::temperature:
                sampling::apply_temperature(cur, options.temperature);
                break;
            case SamplerStage::grammar:
                if (matcher) apply_grammar(cur);
                break;
        }
    }

    // Keeps the candidates the grammar allows (in their order). Few candidates are tested one
    // by one; many take the vocabulary mask.
    void apply_grammar(sampling::CandidateArray& cur) {
        const std::vector<std::uint8_t>& eog = matcher->vocab().eog;
        const bool can_end = matcher->can_end();
        std::size_t kept = 0;
        if (cur.size * 16 < n_vocab) {
            for (std::size_t i = 0; i < cur.size; ++i) {
                if (matcher->allows(cur.data[i].token)) cur.data[kept++] = cur.data[i];
            }
        } else {
            const std::span<const std::uint64_t> bits = matcher->mask();
            for (std::size_t i = 0; i < cur.size; ++i) {
                const auto t = static_cast<std::size_t>(cur.data[i].token);
                const bool ok = eog[t] ? can_end : ((bits[t >> 6] >> (t & 63)) & 1u) != 0;
                if (ok) cur.data[kept++] = cur.data[i];
            }
        }
        if (kept == 0) no_token_allowed();
        if (kept < cur.size) cur.identity = false;
        cur.size = kept;
    }

    [[noreturn]] void no_token_allowed() const {
        fail(std::string("Sampler::sample: the grammar allows none of the ") +
             (order.front() == SamplerStage::grammar ? "tokens" : "candidate tokens") +
             (matcher->can_end() ? " (it is complete, but no end-of-generation token is allowed)" : ""));
    }

    // Sizes the buffers for the vocabulary and checks the logits.
    void prepare(std::span<const float> logits) {
        if (logits.empty()) fail("Sampler::sample: empty logits");
        if (logits.size() > static_cast<std::size_t>(std::numeric_limits<Token>::max())) {
            fail("Sampler::sample: " + std::to_string(logits.size()) + " logits is too many");
        }
        if (logits.size() != n_vocab) size_for(logits.size());
        check_logits(logits);
    }

    // The sampled (non-greedy) chain: the final distribution p in `candidates`, softmaxed.
    sampling::CandidateArray run_chain(std::span<const float> logits) {
        for (std::size_t i = 0; i < n_vocab; ++i) {
            candidates[i] = {static_cast<Token>(i), logits[i], 0.0f};
        }
        sampling::CandidateArray cur{candidates.data(), n_vocab, false, true};
        for (SamplerStage stage : order) run_stage(stage, cur);
        if (cur.data[sampling::argmax(cur)].logit == -kInf) {
            fail("Sampler::sample: every token has probability zero (all logits are -INFINITY)");
        }
        sampling::softmax(cur);
        n_candidates = cur.size;
        return cur;
    }

    // Takes cur.data[chosen] as the sampled token.
    Token commit(const sampling::CandidateArray& cur, std::size_t chosen) {
        if (matcher) matcher->accept(cur.data[chosen].token);
        info = {cur.data[chosen].token, cur.data[chosen].probability, sampling::entropy(cur)};
        history.push(info.token);
        return info.token;
    }

    Token sample(std::span<const float> logits) {
        prepare(logits);
        if (greedy) return sample_greedy(logits);
        const sampling::CandidateArray cur = run_chain(logits);
        return commit(cur, sampling::draw(cur, rng.uniform()));
    }

    // Index of `token` in cur, or cur.size when the chain removed it.
    static std::size_t find(const sampling::CandidateArray& cur, Token token) {
        if (cur.identity) return static_cast<std::size_t>(token) < cur.size ? static_cast<std::size_t>(token) : cur.size;
        for (std::size_t i = 0; i < cur.size; ++i) {
            if (cur.data[i].token == token) return i;
        }
        return cur.size;
    }

    SpeculativeSample sample_speculative(std::span<const float> logits, Token draft,
                                         std::span<const SampleCandidate> q) {
        if (draft < 0) fail("Sampler::sample_speculative: negative draft token " + std::to_string(draft));
        prepare(logits);
        if (greedy) {
            const Token t = sample_greedy(logits);
            return {t, t == draft};
        }
        double q_draft = 0.0;
        for (const SampleCandidate& c : q) {
            if (c.token == draft) q_draft += c.probability;
        }
        if (!(q_draft > 0.0)) {
            fail("Sampler::sample_speculative: the draft distribution gives token " + std::to_string(draft) +
                 " no probability");
        }
        const sampling::CandidateArray cur = run_chain(logits);
        const std::size_t at = find(cur, draft);
        const double p_draft = at < cur.size ? cur.data[at].probability : 0.0;
        // Accept with probability min(1, p/q): u < p/q, with u uniform in [0, 1).
        if (rng.uniform() * q_draft < p_draft) return {commit(cur, at), true};
        // Rejected: draw from the residual max(0, p - q), normalized. q is spread densely first.
        if (dense_q.size() != n_vocab) dense_q.assign(n_vocab, 0.0);  // first rejection only
        for (const SampleCandidate& c : q) {
            if (c.token >= 0 && static_cast<std::size_t>(c.token) < n_vocab) {
                dense_q[static_cast<std::size_t>(c.token)] += c.probability;
            }
        }
        auto residual = [&](std::size_t i) {
            const SampleCandidate& c = cur.data[i];
            return std::max(0.0, static_cast<double>(c.probability) - dense_q[static_cast<std::size_t>(c.token)]);
        };
        double total = 0.0;
        for (std::size_t i = 0; i < cur.size; ++i) total += residual(i);
        std::size_t chosen = cur.size;
        const double u = rng.uniform();
        if (total > 0.0) {
            const double target = u * total;
            double cum = 0.0;
            for (std::size_t i = 0; i < cur.size && chosen == cur.size; ++i) {
                const double r = residual(i);
                cum += r;
                if (r > 0.0 && cum > target) chosen = i;
            }
            for (std::size_t i = cur.size; i-- > 0 && chosen == cur.size;) {
                if (residual(i) > 0.0) chosen = i;  // rounding left the target past the sum
            }
        } else {
            // p <= q everywhere only up to rounding (then p/q >= 1 wherever q > 0): draw from p.
            chosen = sampling::draw(cur, u);
        }
        for (const SampleCandidate& c : q) {
            if (c.token >= 0 && static_cast<std::size_t>(c.token) < n_vocab) dense_q[static_cast<std::size_t>(c.token)] = 0.0;
        }
        return {commit(cur, chosen), cur.data[chosen].token == draft};
    }

    // Index of the highest value (ties: the lowest index).
    std::size_t argmax(const float* g) const {
        std::size_t best = 0;
        for (std::size_t i = 1; i < n_vocab; ++i) {
            if (g[i] > g[best]) best = i;  // strict: ties keep the lowest id
        }
        return best;
    }

    // Greedy: bias and penalties on a dense copy of the logits, then one scan; nothing sorted.
    Token sample_greedy(std::span<const float> logits) {
        float* g = greedy_logits.data();
        std::copy(logits.begin(), logits.end(), g);
        for (SamplerStage stage : order) {
            if (stage == SamplerStage::logit_bias) {
                for (const auto& [token, bias] : options.logit_bias) g[token] += bias;
            } else if (stage == SamplerStage::penalties && penalties_on) {
                sampling::apply_penalties(greedy_logits, history,
                                          {options.repeat_penalty, options.frequency_penalty,
                                           options.presence_penalty},
                                          counts);
            }
        }
        std::size_t best = argmax(g);
        // The grammar: the best token usually passes one cheap test; otherwise mask and rescan
        // (the same token as masking first: masking only removes tokens).
        if (matcher && !matcher->allows(static_cast<Token>(best))) {
            const std::span<const std::uint64_t> bits = matcher->mask();
            const std::vector<std::uint8_t>& eog = matcher->vocab().eog;
            const bool can_end = matcher->can_end();
            for (std::size_t i = 0; i < n_vocab; ++i) {
                const bool ok = eog[i] ? can_end : ((bits[i >> 6] >> (i & 63)) & 1u) != 0;
                if (!ok) g[i] = -kInf;
            }
            best = argmax(g);
            if (g[best] == -kInf) no_token_allowed();
        }
        const float best_logit = g[best];
        if (best_logit == -kInf) {
            fail("Sampler::sample: every token has probability zero (all logits are -INFINITY)");
        }
        if (matcher) matcher->accept(static_cast<Token>(best));
        candidates[0] = {static_cast<Token>(best), best_logit, 1.0f};
        n_candidates = 1;
        info = {static_cast<Token>(best), 1.0f, 0.0f};
        history.push(info.token);
        return info.token;
    }
};

namespace {
SamplerOptions greedy_options() {
    SamplerOptions o;
    o.temperature = 0.0f;
    return o;
}
}  // namespace

Sampler::Sampler() : Sampler(greedy_options()) {}
Sampler::Sampler(SamplerOptions options) : impl_(std::make_unique<Impl>(std::move(options), nullptr)) {}
Sampler::Sampler(const Model& model, SamplerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options), &model)) {}
Sampler::~Sampler() = default;
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;

Token Sampler::sample(std::span<const float> logits) { return impl_->sample(logits); }

SpeculativeSample Sampler::sample_speculative(std::span<const float> logits, Token draft,
                                              std::span<const SampleCandidate> draft_distribution) {
    return impl_->sample_speculative(logits, draft, draft_distribution);
}

void Sampler::accept(Token token) {
    if (token < 0) fail("Sampler::accept: negative token " + std::to_string(token));
    impl_->history.push(token);
}

void Sampler::set_history(std::span<const Token> tokens) {
    for (Token t : tokens) {
        if (t < 0) fail("Sampler::set_history: negative token " + std::to_string(t));
    }
    impl_->history.clear();
    const std::size_t keep = std::min(tokens.size(), impl_->history.capacity());
    for (std::size_t i = tokens.size() - keep; i < tokens.size(); ++i) impl_->history.push(tokens[i]);
}

const SampleInfo& Sampler::last() const noexcept { return impl_->info; }

bool Sampler::has_grammar() const noexcept { return impl_->matcher != nullptr; }

bool Sampler::grammar_complete() const noexcept { return !impl_->matcher || impl_->matcher->can_end(); }

std::span<const SampleCandidate> Sampler::candidates() const noexcept {
    return {impl_->candidates.data(), impl_->n_candidates};
}

void Sampler::reset() {
    impl_->history.clear();
    impl_->rng.reseed(impl_->seed);
    impl_->info = {};
    impl_->n_candidates = 0;
    if (impl_->matcher) impl_->matcher->reset();
}

void Sampler::reset_grammar() {
    if (impl_->matcher) impl_->matcher->reset();
}

std::uint64_t Sampler::seed() const noexcept { return impl_->seed; }

std::vector<std::uint8_t> Sampler::save_state() const {
    if (!impl_->matcher) return sampling::encode_state(impl_->seed, impl_->rng.state(), impl_->history, nullptr);
    const sampling::GrammarPosition position{impl_->matcher->grammar().fingerprint,
                                             impl_->matcher->partial(), impl_->matcher->stacks()};
    return sampling::encode_state(impl_->seed, impl_->rng.state(), impl_->history, &position);
}

void Sampler::restore_state(std::span<const std::uint8_t> bytes) {
    const sampling::DecodedState state = sampling::decode_state(bytes);  // throws; nothing changed
    grammar::Matcher* m = impl_->matcher.get();
    if (state.has_grammar && !m) fail("Sampler::restore_state: the state holds a grammar position, but this sampler has no grammar");
    if (!state.has_grammar && m) fail("Sampler::restore_state: the state holds no grammar position (saved without a grammar)");
    if (m) {
        if (state.grammar.fingerprint != m->grammar().fingerprint) {
            fail("Sampler::restore_state: the state was saved with another grammar");
        }
        m->set_state(state.grammar.stacks, state.grammar.partial);  // throws; nothing changed
    }
    impl_->seed = state.seed;
    impl_->rng.set_state(state.rng);
    impl_->history.clear();
    const std::size_t keep = std::min(state.history.size(), impl_->history.capacity());
    for (std::size_t i = state.history.size() - keep; i < state.history.size(); ++i) {
        impl_->history.push(state.history[i]);
    }
}

const SamplerOptions& Sampler::options() const noexcept { return impl_->options; }

}  // namespace ember

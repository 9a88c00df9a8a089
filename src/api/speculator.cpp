#include "ember/speculative.hpp"

#include "api/speculator_impl.hpp"
#include "runtime/fail.hpp"
#include "speculative/draft_proposer.hpp"
#include "speculative/vocab_match.hpp"

namespace ember {
namespace {

/// One verification row of a drafted token, in target decode passes (measured on TinyLlama
/// Q8_0: a pass over 9 rows costs about 1.4 passes over one).
constexpr double kRowCost = 0.05;

constexpr int kMaxDraft = 64;
constexpr int kMaxNgram = 16;

void validate(const SpeculativeOptions& o) {
    if (o.draft != nullptr && o.lookup_ngram != 0) {
        fail("SpeculativeOptions: set a draft model or lookup_ngram, not both");
    }
    if (o.draft == nullptr && o.lookup_ngram == 0) {
        fail("SpeculativeOptions: set a draft model or lookup_ngram (the proposer)");
    }
    if (o.lookup_ngram < 0 || o.lookup_ngram > kMaxNgram) {
        fail("SpeculativeOptions::lookup_ngram must be in [0, " + std::to_string(kMaxNgram) + "], got " +
             std::to_string(o.lookup_ngram));
    }
    if (o.max_draft < 1 || o.max_draft > kMaxDraft) {
        fail("SpeculativeOptions::max_draft must be in [1, " + std::to_string(kMaxDraft) + "], got " +
             std::to_string(o.max_draft));
    }
    if (o.draft_threads < 0) {
        fail("SpeculativeOptions::draft_threads must be >= 0, got " + std::to_string(o.draft_threads));
    }
}

std::unique_ptr<speculative::Proposer> make_proposer(const Model& target, const SpeculativeOptions& o) {
    if (o.draft == nullptr) return std::make_unique<speculative::LookupProposer>(o.lookup_ngram);
    const auto& t = *detail::ModelAccess::impl(target);
    const auto& d = *detail::ModelAccess::impl(*o.draft);
    speculative::check_vocab_match(*d.tokenizer, *t.tokenizer, d.info.name, t.info.name);
    // Decode reads every weight once a pass: a draft pass costs the draft's share of the bytes.
    const double cost = t.info.weight_bytes > 0
                            ? static_cast<double>(d.info.weight_bytes) / static_cast<double>(t.info.weight_bytes)
                            : 1.0;
    return std::make_unique<speculative::DraftProposer>(*o.draft, t.config.n_vocab, cost, o.draft_threads);
}

}  // namespace

Speculator::Impl::Impl(const Model& target_model, SpeculativeOptions o)
    : target(detail::ModelAccess::impl(target_model)),
      options((validate(o), o)),
      proposer(make_proposer(target_model, o)),
      length(o.max_draft, o.adaptive, proposer->cost_per_token() + kRowCost) {
    if (o.draft != nullptr) {
        draft.emplace(*o.draft);  // the caller's pointer need not outlive the constructor
        options.draft = &*draft;
    }
}

Speculator::Speculator(const Model& target, SpeculativeOptions options)
    : impl_(std::make_unique<Impl>(target, std::move(options))) {}
Speculator::~Speculator() = default;
Speculator::Speculator(Speculator&&) noexcept = default;
Speculator& Speculator::operator=(Speculator&&) noexcept = default;

const SpeculativeOptions& Speculator::options() const noexcept { return impl_->options; }
int Speculator::draft_length() const noexcept { return impl_->length.next(); }
double Speculator::acceptance_estimate() const noexcept { return impl_->length.acceptance(); }
const SpeculativeStats& Speculator::stats() const noexcept { return impl_->stats; }

void Speculator::reset() {
    impl_->proposer->reset();
    impl_->length.reset();
    impl_->stats = {};
}

}  // namespace ember

#include "speculative/draft_proposer.hpp"

#include <algorithm>

#include "api/session_impl.hpp"

namespace ember::speculative {

DraftProposer::DraftProposer(Model draft, std::int64_t target_vocab, double cost_per_token, int threads)
    : draft_(std::move(draft)), target_vocab_(target_vocab), cost_(cost_per_token), threads_(threads) {}

void DraftProposer::reset() {
    if (session_) session_->reset();
}

void DraftProposer::prepare_sampler(const ProposeRequest& req) {
    if (sampler_ && sampler_seed_ == req.seed) return;
    SamplerOptions o = req.sampling ? *req.sampling : SamplerOptions{};
    if (!req.sampling) o.temperature = 0.0f;
    o.seed = req.seed;
    // Biases for ids the draft does not have cannot apply to it.
    const auto n_draft = static_cast<Token>(draft_.n_vocab());
    std::erase_if(o.logit_bias, [n_draft](const auto& b) { return b.first >= n_draft; });
    sampler_.emplace(std::move(o));
    sampler_seed_ = req.seed;
}

bool DraftProposer::sync(const ProposeRequest& req, Status& status) {
    status = Status::ok;
    const int threads = threads_ > 0 ? threads_ : req.threads;
    if (!session_ || session_->context() < req.n_ctx || session_->options().threads != threads) {
        SessionOptions o;
        o.context = req.n_ctx;
        o.threads = threads;
        o.batch = req.batch;
        session_.emplace(draft_, o);
    }
    auto& s = detail::SessionAccess::impl(*session_);
    const std::span<const Token> ctx = req.context;
    const auto& have = s.tokens;
    std::size_t common = 0;
    const std::size_t limit = std::min(have.size(), ctx.size());
    while (common < limit && have[common] == ctx[common]) ++common;
    // Something must run to give logits after the last token: at least that token.
    if (common == ctx.size()) --common;
    if (static_cast<std::int64_t>(common) < s.cache.rewind_limit()) common = 0;  // sliding windows
    const std::span<const Token> fresh = ctx.subspan(common);
    for (const Token t : fresh) {
        if (!s.valid_token(t)) return false;  // a token of the target's larger vocabulary
    }
    s.drop_after(static_cast<int>(common));
    session_->set_cancel_callback(req.cancel);
    status = session_->prefill(fresh);
    return true;
}

Status DraftProposer::propose(const ProposeRequest& req, Proposal& out) {
    if (req.context.empty() || req.max <= 0) return Status::ok;
    Status status = Status::ok;
    if (!sync(req, status)) return Status::ok;
    if (status != Status::ok) return status;
    prepare_sampler(req);
    sampler_->set_history(req.context);
    const bool sampled = sampler_->options().temperature > 0.0f;
    for (int i = 0; i < req.max; ++i) {
        const Token t = sampler_->sample(session_->logits());
        if (sampled) out.add(t, sampler_->candidates());
        else out.add(t);
        // A token the target lacks is never accepted, and nothing follows an end of generation.
        if (t >= target_vocab_ || (req.ends && req.ends(t)) || i + 1 == req.max) break;
        status = session_->decode(t);
        if (status == Status::cancelled) {
            out.clear();
            return status;
        }
        if (status != Status::ok) break;  // no room: propose what there is
    }
    return Status::ok;
}

}  // namespace ember::speculative

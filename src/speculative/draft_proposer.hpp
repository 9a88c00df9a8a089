// The draft-model proposer: a smaller model with the target's vocabulary runs its own session,
// kept in step with the target's tokens (the longest common prefix stays cached), and samples
// the guesses with the target's sampler options (greedy when the target is greedy).
#pragma once

#include <optional>

#include "ember/model.hpp"
#include "ember/session.hpp"
#include "speculative/proposer.hpp"

namespace ember::speculative {

class DraftProposer final : public Proposer {
public:
    /// `cost_per_token`: one draft pass in target passes. `threads` 0: the target session's.
    DraftProposer(Model draft, std::int64_t target_vocab, double cost_per_token, int threads);
    Status propose(const ProposeRequest& req, Proposal& out) override;
    void reset() override;
    double cost_per_token() const noexcept override { return cost_; }

private:
    /// Brings the draft session to req.context; false when it cannot hold it (ids outside its
    /// vocabulary), Status::cancelled through `status`.
    bool sync(const ProposeRequest& req, Status& status);
    void prepare_sampler(const ProposeRequest& req);

    Model draft_;
    std::int64_t target_vocab_;
    double cost_;
    int threads_;
    std::optional<Session> session_;
    std::optional<Sampler> sampler_;
    std::uint64_t sampler_seed_ = 0;
};

}  // namespace ember::speculative

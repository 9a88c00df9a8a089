// The state behind ember::Speculator: the proposer, the adaptive draft length, statistics and
// the buffers of one step (reused, so steps allocate nothing once warm).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "api/model_impl.hpp"
#include "ember/speculative.hpp"
#include "speculative/draft_length.hpp"
#include "speculative/proposer.hpp"

namespace ember {

struct Speculator::Impl {
    Impl(const Model& target, SpeculativeOptions options);

    std::shared_ptr<const detail::ModelImpl> target;
    std::optional<Model> draft;     ///< options.draft points here
    SpeculativeOptions options;
    std::unique_ptr<speculative::Proposer> proposer;
    speculative::DraftLength length;
    SpeculativeStats stats;
    std::uint64_t generations = 0;  ///< generate() calls served (seeds the draft sampler)

    std::vector<Token> context;     ///< the target's tokens and the next token
    speculative::Proposal proposal;
    std::vector<Token> rows;        ///< the verification pass
};

/// The library's access to a Speculator's state (Speculator befriends it).
struct detail::SpeculatorAccess {
    using Impl = Speculator::Impl;
    static Impl& impl(Speculator& s) noexcept { return *s.impl_; }
};

}  // namespace ember

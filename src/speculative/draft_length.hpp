// The adaptive draft length: how many tokens to propose next, from the running acceptance rate.
//
// With a chance `a` that a proposed token is accepted (each one tested only while all before it
// were), a draft of k tokens yields 1 + a + a^2 + ... + a^k tokens per verification (the
// accepted prefix plus the target's own next token) and costs 1 + c k target passes, where c
// is the cost of one drafted token: its share of the verification pass plus, with a draft
// model, one draft pass (the draft's weight bytes over the target's: decode is bandwidth-bound).
// The length maximizing tokens per cost is taken, between 1 and the maximum. `a` is estimated
// from the last steps (exponentially decayed counts of tested and accepted tokens, starting
// from a prior of 3 in 4).
#pragma once

namespace ember::speculative {

class DraftLength {
public:
    /// `cost` is c above (>= 0); not adaptive: always `max`.
    DraftLength(int max, bool adaptive, double cost);

    int next() const noexcept { return next_; }
    /// A verification kept the first `accepted` proposed tokens and, when `rejected`, not the
    /// one after them (tokens after a rejection are not tested).
    void record(int accepted, bool rejected);
    /// The estimated chance that a proposed token is accepted.
    double acceptance() const noexcept;
    void reset();

private:
    void choose();
    int max_ = 1;
    bool adaptive_ = true;
    double cost_ = 0.0;
    double accepted_ = 0.0, tested_ = 0.0;  // decayed counts
    int next_ = 1;
};

}  // namespace ember::speculative

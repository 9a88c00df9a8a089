#include "grammar/matcher.hpp"

#include <algorithm>
#include <string>

#include "runtime/fail.hpp"

namespace ember::grammar {
namespace {

enum class Utf8Step { invalid, pending, complete };

// One byte of strict UTF-8 decoding (no overlong forms, surrogates or code points past
// U+10FFFF; those are rejected as early as their second byte shows them).
Utf8Step utf8_step(PartialUtf8& p, std::uint8_t b, char32_t& cp) noexcept {
    if (p.remain == 0) {
        if (b < 0x80) {
            cp = b;
            return Utf8Step::complete;
        }
        if (b >= 0xC2 && b <= 0xDF) p = {b & 0x1Fu, 1, 2};
        else if (b >= 0xE0 && b <= 0xEF) p = {b & 0x0Fu, 2, 3};
        else if (b >= 0xF0 && b <= 0xF4) p = {b & 0x07u, 3, 4};
        else return Utf8Step::invalid;
        return Utf8Step::pending;
    }
    if ((b & 0xC0) != 0x80) return Utf8Step::invalid;
    const std::uint32_t v = (p.value << 6) | (b & 0x3Fu);
    if (p.remain + 1 == p.length) {  // second byte: the range is known now
        if (p.length == 3 && (v < 0x20 || (v >= 0x360 && v < 0x380))) return Utf8Step::invalid;
        if (p.length == 4 && (v < 0x10 || v > 0x10F)) return Utf8Step::invalid;
    }
    p.value = v;
    if (--p.remain == 0) {
        cp = v;
        p = {};
        return Utf8Step::complete;
    }
    return Utf8Step::pending;
}

std::uint32_t node_hash(std::uint32_t pos, std::uint32_t parent) noexcept {
    const std::uint64_t k = ((static_cast<std::uint64_t>(pos) << 32) | parent) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::uint32_t>(k >> 32);
}

constexpr std::size_t kInitialNodes = 4096;
constexpr std::size_t kInitialStates = 64;

std::uint64_t set_hash(std::span<const std::uint32_t> set, const PartialUtf8& p) noexcept {
    std::uint64_t h = 0xCBF29CE484222325ull ^ (static_cast<std::uint64_t>(p.value) << 16) ^
                      (static_cast<std::uint64_t>(p.remain) << 8) ^ p.length;
    for (std::uint32_t s : set) h = (h ^ s) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

void check_token(Token token, std::size_t n_vocab) {
    if (token < 0 || static_cast<std::size_t>(token) >= n_vocab) {
        fail("grammar: token " + std::to_string(token) + " is outside the vocabulary of " +
             std::to_string(n_vocab) + " tokens");
    }
}

}  // namespace

Matcher::Matcher(std::shared_ptr<const Grammar> grammar, std::shared_ptr<const TokenTrie> vocab)
    : grammar_(std::move(grammar)), vocab_(std::move(vocab)) {
    n_words_ = (vocab_->n_vocab + 63) / 64;
    nodes_.reserve(kInitialNodes);
    table_.assign(2 * kInitialNodes, kNil);
    seen_.assign(kInitialNodes, 0);
    live_.reserve(kInitialNodes);
    work_.reserve(256);
    scratch_.reserve(256);
    state_.reserve(256);
    states_.reserve(kInitialStates);
    state_sets_.reserve(16 * kInitialStates);
    state_table_.assign(2 * kInitialStates, kDead);
    transitions_.reserve(256 * kInitialStates);
    levels_.resize(vocab_->max_depth + 1);
    for (CacheEntry& e : cache_) e.bits.assign(n_words_, 0);

    // The start: every alternative of root, expanded.
    ++stamp_;
    seen_empty_ = false;
    const Grammar& g = *grammar_;
    for (std::uint32_t a = g.alt_offset[g.root]; a < g.alt_offset[g.root + 1]; ++a) {
        const std::uint32_t at = g.alt_starts[a];
        expand(ends_sequence(g.elements[at].op) ? kNil : make_node(at, kNil), start_state_);
    }
    std::sort(start_state_.begin(), start_state_.end());
    reset();
}

void Matcher::reset() {
    state_.assign(start_state_.begin(), start_state_.end());
    partial_ = {};
    current_ = kDead;
}

bool Matcher::can_end() const noexcept {
    return partial_.remain == 0 && !state_.empty() && state_.back() == kNil;
}

// ---- stack nodes ------------------------------------------------------------------------------

std::uint32_t Matcher::make_node(std::uint32_t pos, std::uint32_t parent) {
    std::size_t mask = table_.size() - 1;
    std::size_t i = node_hash(pos, parent) & mask;
    for (std::uint32_t id; (id = table_[i]) != kNil; i = (i + 1) & mask) {
        if (nodes_[id].pos == pos && nodes_[id].parent == parent) return id;
    }
    if (nodes_.size() == seen_.size()) {
        grow_nodes();
        mask = table_.size() - 1;
        i = node_hash(pos, parent) & mask;
        while (table_[i] != kNil) i = (i + 1) & mask;
    }
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back({pos, parent});
    table_[i] = id;
    return id;
}

// Doubles the arena (an allocation, for grammars whose states outgrow the buffers).
void Matcher::grow_nodes() {
    const std::size_t capacity = seen_.size() * 2;
    if (capacity > (std::size_t{1} << 28)) fail("grammar: the parse state grew too large");
    nodes_.reserve(capacity);
    seen_.resize(capacity, 0);
    live_.reserve(capacity);
    table_.assign(2 * capacity, kNil);
    const std::size_t mask = table_.size() - 1;
    for (std::size_t id = 0; id < nodes_.size(); ++id) {
        std::size_t i = node_hash(nodes_[id].pos, nodes_[id].parent) & mask;
        while (table_[i] != kNil) i = (i + 1) & mask;
        table_[i] = static_cast<std::uint32_t>(id);
    }
}

// Forgets every state, then keeps only the nodes reachable from the position and the start.
// Parents are older than their children, so compacting in id order keeps that order and can be
// done in place.
void Matcher::compact() {
    clear_states();
    live_.assign(nodes_.size(), 0);
    auto mark = [&](std::uint32_t s) {
        while (s != kNil && !live_[s]) {
            live_[s] = 1;
            s = nodes_[s].parent;
        }
    };
    for (std::uint32_t s : state_) mark(s);
    for (std::uint32_t s : start_state_) mark(s);
    // `seen_` doubles as the old -> new id map (its stamps restart afterwards).
    std::uint32_t next = 0;
    for (std::size_t id = 0; id < nodes_.size(); ++id) {
        if (!live_[id]) continue;
        const Node n = nodes_[id];
        nodes_[next] = {n.pos, n.parent == kNil ? kNil : seen_[n.parent]};
        seen_[id] = next++;
    }
    auto remap = [&](std::vector<std::uint32_t>& set) {
        for (std::uint32_t& s : set) s = s == kNil ? kNil : seen_[s];
        std::sort(set.begin(), set.end());
    };
    remap(state_);
    remap(start_state_);
    nodes_.resize(next);
    std::fill(seen_.begin(), seen_.end(), 0);
    stamp_ = 0;
    std::fill(table_.begin(), table_.end(), kNil);
    const std::size_t mask = table_.size() - 1;
    for (std::size_t id = 0; id < nodes_.size(); ++id) {
        std::size_t i = node_hash(nodes_[id].pos, nodes_[id].parent) & mask;
        while (table_[i] != kNil) i = (i + 1) & mask;
        table_[i] = static_cast<std::uint32_t>(id);
    }
    if (nodes_.size() * 2 > seen_.size()) grow_nodes();  // mostly live: make room
}

void Matcher::clear_mask_cache() noexcept {
    for (CacheEntry& e : cache_) e.state = kDead;
}

void Matcher::clear_states() {
    states_.clear();
    state_sets_.clear();
    transitions_.clear();
    std::fill(state_table_.begin(), state_table_.end(), kDead);
    current_ = kDead;
    clear_mask_cache();
}

void Matcher::maintain() {
    if (nodes_.size() * 4 > seen_.size() * 3) {
        compact();
    } else if (states_.size() >= kMaxStates) {
        clear_states();
    }
}

// ---- advancing ------------------------------------------------------------------------------

void Matcher::expand(std::uint32_t stack, std::vector<std::uint32_t>& out) {
    const Grammar& g = *grammar_;
    auto visit = [&](std::uint32_t s) {
        if (s == kNil) {
            if (!seen_empty_) {
                seen_empty_ = true;
                work_.push_back(kNil);
            }
        } else if (seen_[s] != stamp_) {
            seen_[s] = stamp_;
            work_.push_back(s);
        }
    };
    work_.clear();
    visit(stack);
    while (!work_.empty()) {
        const std::uint32_t s = work_.back();
        work_.pop_back();
        if (s == kNil) {
            out.push_back(kNil);
            continue;
        }
        const Node n = nodes_[s];
        const Element e = g.elements[n.pos];
        if (is_terminal(e.op)) {
            out.push_back(s);
            continue;
        }
        // A rule reference: replace it by its continuation, then each alternative on top.
        const std::uint32_t cont =
            ends_sequence(g.elements[n.pos + 1].op) ? n.parent : make_node(n.pos + 1, n.parent);
        for (std::uint32_t a = g.alt_offset[e.value]; a < g.alt_offset[e.value + 1]; ++a) {
            const std::uint32_t at = g.alt_starts[a];
            visit(ends_sequence(g.elements[at].op) ? cont : make_node(at, cont));
        }
    }
}

std::size_t Matcher::advance(std::span<const std::uint32_t> in, char32_t cp, std::vector<std::uint32_t>& out) {
    const Grammar& g = *grammar_;
    if (++stamp_ == 0) {
        std::fill(seen_.begin(), seen_.end(), 0);
        stamp_ = 1;
    }
    seen_empty_ = false;
    const std::size_t before = out.size();
    for (const std::uint32_t s : in) {
        if (s == kNil) continue;
        const Node n = nodes_[s];
        if (!g.matches(g.elements[n.pos], cp)) continue;
        const std::uint32_t next =
            ends_sequence(g.elements[n.pos + 1].op) ? n.parent : make_node(n.pos + 1, n.parent);
        expand(next, out);
        if (out.size() - before > kMaxStacks) {
            fail("grammar: more than " + std::to_string(kMaxStacks) +
                 " parse stacks at once (the grammar is too ambiguous)");
        }
    }
    return out.size() - before;
}

bool Matcher::partial_possible(std::span<const std::uint32_t> in, const PartialUtf8& p) const {
    static constexpr char32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    const unsigned shift = 6u * p.remain;
    char32_t lo = static_cast<char32_t>(p.value) << shift;
    char32_t hi = lo | ((char32_t{1} << shift) - 1);
    lo = std::max(lo, kMin[p.length]);
    hi = std::min<char32_t>(hi, 0x10FFFF);
    const Grammar& g = *grammar_;
    for (std::uint32_t s : in) {
        if (s != kNil && g.may_match(g.elements[nodes_[s].pos], lo, hi)) return true;
    }
    return false;
}

// ---- states and transitions --------------------------------------------------------------------

std::uint32_t Matcher::intern(std::span<const std::uint32_t> set, const PartialUtf8& p) {
    const std::uint64_t h = set_hash(set, p);
    std::size_t mask = state_table_.size() - 1;
    std::size_t i = h & mask;
    for (std::uint32_t id; (id = state_table_[i]) != kDead; i = (i + 1) & mask) {
        const State& st = states_[id];
        if (st.hash == h && st.partial == p && st.size == set.size() &&
            std::equal(set.begin(), set.end(), state_sets_.begin() + st.begin)) {
            return id;
        }
    }
    const auto id = static_cast<std::uint32_t>(states_.size());
    states_.push_back({h, static_cast<std::uint32_t>(state_sets_.size()), static_cast<std::uint32_t>(set.size()), p});
    state_sets_.insert(state_sets_.end(), set.begin(), set.end());
    transitions_.resize(transitions_.size() + 256, kUnknown);
    if (states_.size() * 2 > state_table_.size()) {  // rehash at half load
        state_table_.assign(state_table_.size() * 2, kDead);
        mask = state_table_.size() - 1;
        for (std::uint32_t s = 0; s < states_.size(); ++s) {
            std::size_t j = states_[s].hash & mask;
            while (state_table_[j] != kDead) j = (j + 1) & mask;
            state_table_[j] = s;
        }
    } else {
        state_table_[i] = id;
    }
    return id;
}

std::uint32_t Matcher::next_state(std::uint32_t s, std::uint8_t byte) {
    const std::uint32_t t = transitions_[static_cast<std::size_t>(s) * 256 + byte];
    return t != kUnknown ? t : compute_transition(s, byte);
}

std::uint32_t Matcher::compute_transition(std::uint32_t s, std::uint8_t byte) {
    PartialUtf8 p = states_[s].partial;
    char32_t cp = 0;
    std::uint32_t result = kDead;
    switch (utf8_step(p, byte, cp)) {
        case Utf8Step::invalid: break;
        case Utf8Step::pending:
            if (partial_possible(set_of(s), p)) {
                scratch_.assign(set_of(s).begin(), set_of(s).end());
                result = intern(scratch_, p);
            }
            break;
        case Utf8Step::complete:
            scratch_.clear();
            if (advance(set_of(s), cp, scratch_) > 0) {
                std::sort(scratch_.begin(), scratch_.end());
                result = intern(scratch_, p);
            }
            break;
    }
    transitions_[static_cast<std::size_t>(s) * 256 + byte] = result;
    return result;
}

std::uint32_t Matcher::current() {
    if (current_ == kDead) current_ = intern(state_, partial_);
    return current_;
}

std::uint32_t Matcher::walk(std::string_view piece) {
    std::uint32_t s = current();
    for (char c : piece) {
        s = next_state(s, static_cast<std::uint8_t>(c));
        if (s == kDead) break;
    }
    return s;
}

bool Matcher::allows(Token token) {
    check_token(token, vocab_->n_vocab);
    if (vocab_->eog[static_cast<std::size_t>(token)]) return can_end();
    const std::string_view piece = vocab_->piece(token);
    if (piece.empty()) return false;
    maintain();
    return walk(piece) != kDead;
}

void Matcher::accept(Token token) {
    check_token(token, vocab_->n_vocab);
    if (vocab_->eog[static_cast<std::size_t>(token)]) {
        if (!can_end()) {
            fail("grammar: end-of-generation token " + std::to_string(token) +
                 " before the grammar is complete");
        }
        return;
    }
    const std::string_view piece = vocab_->piece(token);
    maintain();
    const std::uint32_t s = piece.empty() ? kDead : walk(piece);
    if (s == kDead) fail("grammar: token " + std::to_string(token) + " is not allowed here");
    const std::span<const std::uint32_t> set = set_of(s);
    state_.assign(set.begin(), set.end());
    partial_ = states_[s].partial;
    current_ = s;
}

// ---- masks ------------------------------------------------------------------------------------

// One preorder scan of the trie: node i's state is its parent's state moved by its byte.
void Matcher::compute_mask(std::uint32_t start, std::uint64_t* bits) {
    std::fill(bits, bits + n_words_, 0);
    const TokenTrie& t = *vocab_;
    levels_[0] = start;
    const std::size_t n = t.n_nodes();
    for (std::size_t i = 1; i < n;) {
        const std::uint32_t s = next_state(levels_[t.depth[i] - 1], t.byte[i]);
        if (s == kDead) {  // no token with this prefix can follow
            i = t.subtree_end[i];
            continue;
        }
        levels_[t.depth[i]] = s;
        for (std::uint32_t k = t.token_begin[i]; k < t.token_begin[i + 1]; ++k) {
            const auto id = static_cast<std::uint32_t>(t.ids[k]);
            bits[id >> 6] |= std::uint64_t{1} << (id & 63);
        }
        ++i;
    }
    ++n_computed_;
}

std::span<const std::uint64_t> Matcher::mask() {
    maintain();
    const std::uint32_t s = current();
    CacheEntry* victim = nullptr;  // an empty entry, else the least recently used
    for (CacheEntry& e : cache_) {
        if (e.state == s) {
            e.last_use = ++use_clock_;
            ++n_cache_hits_;
            return e.bits;
        }
        if (!victim || (victim->state != kDead && (e.state == kDead || e.last_use < victim->last_use))) victim = &e;
    }
    victim->state = kDead;
    compute_mask(s, victim->bits.data());  // may throw: the entry stays empty
    victim->state = s;
    victim->last_use = ++use_clock_;
    return victim->bits;
}

// ---- saved states -----------------------------------------------------------------------------

std::vector<std::vector<std::uint32_t>> Matcher::stacks() const {
    std::vector<std::vector<std::uint32_t>> out;
    out.reserve(state_.size());
    for (std::uint32_t s : state_) {
        std::vector<std::uint32_t> stack;
        for (; s != kNil; s = nodes_[s].parent) stack.push_back(nodes_[s].pos);
        std::reverse(stack.begin(), stack.end());
        out.push_back(std::move(stack));
    }
    return out;
}

void Matcher::set_state(const std::vector<std::vector<std::uint32_t>>& stacks, PartialUtf8 partial) {
    const Grammar& g = *grammar_;
    if (stacks.empty()) fail("grammar state: no stacks");
    if (stacks.size() > kMaxStacks) fail("grammar state: too many stacks");
    for (const auto& stack : stacks) {
        for (std::size_t i = 0; i < stack.size(); ++i) {
            const std::uint32_t pos = stack[i];
            if (pos >= g.elements.size()) fail("grammar state: position " + std::to_string(pos) + " is out of range");
            const Op op = g.elements[pos].op;
            const bool top = i + 1 == stack.size();
            // The top waits for a character; the others continue after a rule reference.
            if (top ? !is_terminal(op)
                    : (ends_sequence(op) || pos == 0 || g.elements[pos - 1].op != Op::rule_ref)) {
                fail("grammar state: position " + std::to_string(pos) + " is not a parse position");
            }
        }
    }
    const bool pending_ok = partial.remain == 0
                                ? (partial.length == 0 && partial.value == 0)
                                : (partial.length >= 2 && partial.length <= 4 && partial.remain < partial.length &&
                                   partial.value < (1u << 21));
    if (!pending_ok) fail("grammar state: invalid partial UTF-8 character");

    maintain();
    std::vector<std::uint32_t> state;
    for (const auto& stack : stacks) {
        std::uint32_t parent = kNil;
        for (std::uint32_t pos : stack) parent = make_node(pos, parent);
        state.push_back(parent);
    }
    std::sort(state.begin(), state.end());
    state.erase(std::unique(state.begin(), state.end()), state.end());
    state_ = std::move(state);
    partial_ = partial;
    current_ = kDead;
}

}  // namespace ember::grammar

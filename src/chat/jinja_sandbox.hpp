// Resource limits of one template render and the accounting that enforces them. Chat templates
// come from model files, so a template is hostile input: every string, list and dict a render
// creates is checked here, at the one place such values are made (Value's string constructor,
// make_list, make_dict, Dict::set), whatever operation made it (+, ~, *, join, replace, map,
// format, literals in loops, namespace updates, ...).
//
// Three bounds together keep memory and time small:
//  - the size of every value, counted deeply (a list counts its items and everything they hold,
//    so a list of shared sub-lists cannot grow exponentially): at most max_items items and
//    max_output_bytes bytes of text;
//  - the total created over the render (every new string's bytes, every new container's items):
//    at most max_total_bytes and max_total_items, which bounds the work of quadratic loops;
//  - loop iterations, macro depth and the output itself.
// A namespace cannot hold another namespace (directly or inside a list/dict), so reference
// cycles, which would leak and make printing endless, cannot be built.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ember::jinja {

/// Resource limits of one render (documented in docs/chat-templates.md).
struct RenderLimits {
    std::size_t max_output_bytes = std::size_t{16} << 20;  ///< Output, and the text in any one value.
    std::uint64_t max_loop_iterations = 1'000'000;         ///< Total over all loops of a render.
    int max_call_depth = 64;                               ///< Nested macro calls.
    std::int64_t max_range = 100'000;                      ///< Items in any one value (range(), lists, dicts, deeply).
    std::uint64_t max_total_bytes = std::uint64_t{256} << 20;  ///< Text created over the render.
    std::uint64_t max_total_items = 16'000'000;              ///< List/dict items created over the render.
    int max_nesting = 64;                                     ///< Lists/dicts nested in each other.
};

/// The deep size of a value: what printing or comparing it walks.
struct Weight {
    std::uint64_t items = 0;  ///< list/dict items, counted at every depth
    std::uint64_t bytes = 0;  ///< string bytes (values and dict keys), at every depth
    int depth = 0;            ///< container nesting (0 for scalars)
    bool has_namespace = false;  ///< holds a namespace or loop object somewhere
};

/// Makes `limits` the active limits of this thread until destroyed (one render). Nests.
class SandboxScope {
public:
    explicit SandboxScope(const RenderLimits& limits);
    ~SandboxScope();
    SandboxScope(const SandboxScope&) = delete;
    SandboxScope& operator=(const SandboxScope&) = delete;

private:
    friend void sandbox_new_string(std::size_t);
    friend void sandbox_new_container(const Weight&, std::size_t);
    friend const RenderLimits* active_limits() noexcept;
    friend void sandbox_check_text(std::size_t);
    friend void sandbox_check_items(std::size_t);
    const RenderLimits& limits_;
    std::uint64_t total_bytes_ = 0, total_items_ = 0;
    SandboxScope* previous_;
};

/// The limits of the render running on this thread, or nullptr outside a render.
const RenderLimits* active_limits() noexcept;
/// Accounts a new string of `bytes` bytes; throws ember::Error past a limit. No-op outside a render.
void sandbox_new_string(std::size_t bytes);
/// Throws when text being built reaches `bytes`, past the active limit (builders call it as they
/// grow a string, before it becomes a Value). No-op outside a render.
void sandbox_check_text(std::size_t bytes);
/// Throws when a list being built (split parts, characters) reaches `n` items, past the active limit.
void sandbox_check_items(std::size_t n);
/// Widths and precisions in format specs ("{:>N}", "%Ns") are at most this.
constexpr std::size_t kMaxFormatWidth = std::size_t{1} << 16;
/// Accounts a new list/dict of `n_items` direct items and deep weight `w`; throws past a limit.
void sandbox_new_container(const Weight& w, std::size_t n_items);

}  // namespace ember::jinja

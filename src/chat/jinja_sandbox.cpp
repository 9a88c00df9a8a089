#include "chat/jinja_sandbox.hpp"

#include <string>

#include "runtime/fail.hpp"

namespace ember::jinja {
namespace {

thread_local SandboxScope* g_active = nullptr;

}  // namespace

SandboxScope::SandboxScope(const RenderLimits& limits) : limits_(limits), previous_(g_active) { g_active = this; }

SandboxScope::~SandboxScope() { g_active = previous_; }

const RenderLimits* active_limits() noexcept { return g_active ? &g_active->limits_ : nullptr; }

void sandbox_new_string(std::size_t bytes) {
    SandboxScope* s = g_active;
    if (!s) return;
    if (bytes > s->limits_.max_output_bytes)
        fail("string of " + std::to_string(bytes) + " bytes is larger than the template limit (" +
             std::to_string(s->limits_.max_output_bytes) + " bytes)");
    s->total_bytes_ += bytes;
    if (s->total_bytes_ > s->limits_.max_total_bytes)
        fail("the template created more than " + std::to_string(s->limits_.max_total_bytes) +
             " bytes of text in one render (the sandbox's limit)");
}

void sandbox_check_text(std::size_t bytes) {
    SandboxScope* s = g_active;
    if (s && bytes > s->limits_.max_output_bytes)
        fail("text longer than the template limit (" + std::to_string(s->limits_.max_output_bytes) + " bytes)");
}

void sandbox_check_items(std::size_t n) {
    SandboxScope* s = g_active;
    if (s && n > static_cast<std::uint64_t>(s->limits_.max_range))
        fail("list of more than " + std::to_string(s->limits_.max_range) + " items (the template limit)");
}

void sandbox_new_container(const Weight& w, std::size_t n_items) {
    SandboxScope* s = g_active;
    if (!s) return;
    const RenderLimits& l = s->limits_;
    if (w.items > static_cast<std::uint64_t>(l.max_range))
        fail("list or dict of " + std::to_string(w.items) + " items (counting nested ones) is larger than the template limit (" +
             std::to_string(l.max_range) + " items)");
    if (w.bytes > l.max_output_bytes)
        fail("list or dict holding " + std::to_string(w.bytes) + " bytes of text is larger than the template limit (" +
             std::to_string(l.max_output_bytes) + " bytes)");
    if (w.depth > l.max_nesting)
        fail("lists or dicts nested deeper than the template limit of " + std::to_string(l.max_nesting));
    s->total_items_ += n_items;
    if (s->total_items_ > l.max_total_items)
        fail("the template created more than " + std::to_string(l.max_total_items) +
             " list or dict items in one render (the sandbox's limit)");
}

}  // namespace ember::jinja

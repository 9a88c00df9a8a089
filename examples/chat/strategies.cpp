#include "strategies.hpp"

#include <cstdio>

#include "terminal.hpp"

namespace ember_chat {
namespace {

void print_kv(const ember::DecodingStats& st) {
    std::fprintf(stderr, "%lld steps of %lld rows in %.3f s; KV blocks shared %lld, copied %lld\n",
                 static_cast<long long>(st.steps), static_cast<long long>(st.rows), st.seconds,
                 static_cast<long long>(st.kv_blocks_shared), static_cast<long long>(st.kv_blocks_copied));
}

// Prefills the prompt; false (after saying why) when Ctrl-C stopped it.
bool prefill(const Options& opt, Conversation& chat, bool completion) {
    Answer a;
    chat.prefill_turn(opt.prompt, completion, a);  // throws when it cannot fit
    if (a.status == ember::Status::ok) return true;
    std::fputs("[interrupted]\n", stderr);
    return false;
}

}  // namespace

int run_beams(const Options& opt, Conversation& chat, bool completion) {
    if (!prefill(opt, chat, completion)) return 1;
    ember::BeamSearchOptions bo;
    bo.beams = opt.beams;
    bo.max_tokens = opt.n_predict;
    const ember::BeamSearchResult r = ember::beam_search(chat.session(), bo);
    if (completion) std::fwrite(opt.prompt.data(), 1, opt.prompt.size(), stdout);
    std::fwrite(r.best.text.data(), 1, r.best.text.size(), stdout);
    std::fputs("\n", stdout);
    std::fflush(stdout);
    std::fprintf(stderr, "beam search: logprob %.6f over %zu tokens%s%s\n", r.best.logprob, r.best.tokens.size(),
                 r.best.done ? " (ended)" : "", r.status == ember::Status::cancelled ? " [interrupted]" : "");
    if (!opt.quiet) print_kv(r.stats);
    return 0;
}

int run_samples(const Options& opt, const ember::Model& model, Conversation& chat, bool completion) {
    if (!prefill(opt, chat, completion)) return 1;
    // Each sampler as a lone run's: seed S+i, the prompt in its penalty history.
    std::vector<ember::Sampler> samplers = ember::make_samplers(model, opt.sampler, opt.samples);
    for (ember::Sampler& s : samplers) {
        for (const ember::Token t : chat.session().tokens()) s.accept(t);
    }
    ember::SampleOptions so;
    so.generate.max_tokens = opt.n_predict;
    so.generate.stop = opt.stop;
    set_generating(true);
    const ember::SamplesResult r = ember::generate_samples(chat.session(), samplers, so);
    set_generating(false);
    for (std::size_t i = 0; i < r.samples.size(); ++i) {
        if (i > 0) std::fputs("---\n", stdout);
        if (completion) std::fwrite(opt.prompt.data(), 1, opt.prompt.size(), stdout);
        std::fwrite(r.samples[i].text.data(), 1, r.samples[i].text.size(), stdout);
        std::fputs("\n", stdout);
    }
    std::fflush(stdout);
    if (interrupted()) std::fputs("[interrupted]\n", stderr);
    if (!opt.quiet) {
        std::fprintf(stderr, "%d samples (seeds from %llu)\n", opt.samples,
                     static_cast<unsigned long long>(samplers.front().seed()));
        print_kv(r.stats);
    }
    return 0;
}

}  // namespace ember_chat

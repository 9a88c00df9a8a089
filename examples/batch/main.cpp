// ember-batch: generates a continuation for every prompt of a file with ember::Engine
// (continuous batching), at most --parallel at once; a new prompt joins as soon as one ends.
// Public API only.
//
//   ember-batch -m MODEL -f PROMPTS [-n 64] [--parallel N] [-c N] [--temp T] [--seed S] [-t N] [--json]
//
// Output (stdout) is in input order: each prompt followed by its continuation and a newline, or
// with --json one object per line: {"index", "prompt", "text" (the continuation only),
// "n_tokens", "ttft_ms"}. A summary line goes to stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "batch_options.hpp"
#include "cli/report.hpp"
#include "ember/ember.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// `text` as the inside of a JSON string (UTF-8 passes through; control bytes are escaped).
std::string json_escape(const std::string& text) {
    std::string out;
    out.reserve(text.size() + 8);
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += ch;
                }
        }
    }
    return out;
}

int run(const ember_batch::Options& o) {
    const std::vector<std::string> prompts = ember_batch::read_prompts(o.prompts_file);
    ember::ModelOptions mo;
    mo.threads = o.threads;
    const ember::Model model = ember::Model::load(o.model, mo);

    ember::EngineOptions eo;
    eo.max_sequences = o.parallel;
    eo.context = o.context;
    eo.threads = o.threads;
    eo.step_tokens = std::max(512, o.parallel);
    eo.kv_type = o.kv_type;
    eo.kv_cache_tokens = o.kv_tokens;
    eo.prefix_cache = o.prefix_cache;
    ember::Engine engine(model, eo);

    // Tokenize (and check) every prompt before the first runs, so a bad line fails fast.
    std::vector<std::vector<ember::Token>> tokens;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        tokens.push_back(model.tokenize(prompts[i]));
        if (tokens.back().size() > static_cast<std::size_t>(engine.context())) {
            throw ember::Error(o.prompts_file + ": prompt " + std::to_string(i) + " has " +
                               std::to_string(tokens.back().size()) + " tokens, more than the context of " +
                               std::to_string(engine.context()) + " (-c)");
        }
    }

    const auto t0 = Clock::now();
    std::vector<ember::RequestHandle> handles;
    for (std::size_t i = 0; i < prompts.size(); ++i) {
        ember::Request r;
        r.prompt = std::move(tokens[i]);
        ember::SamplerOptions so;
        so.temperature = o.temperature;
        // One seed per prompt, fixed by its index: the same text whatever runs beside it.
        so.seed = o.has_seed ? o.seed + i : so.seed;
        r.sampler = ember::Sampler(so);
        r.options.max_tokens = o.n_predict;
        handles.push_back(engine.submit(std::move(r)));
    }

    std::int64_t generated = 0, prompt_tokens = 0;
    std::vector<double> ttft;
    for (std::size_t i = 0; i < handles.size(); ++i) {
        const ember::RequestResult r = handles[i].wait();
        if (r.stop_reason == ember::StopReason::error) {
            throw ember::Error("prompt " + std::to_string(i) + ": " + r.error);
        }
        generated += static_cast<std::int64_t>(r.tokens.size());
        prompt_tokens += r.prompt_tokens;
        if (r.ttft_seconds > 0) ttft.push_back(r.ttft_seconds);
        if (o.json) {
            std::printf("{\"index\": %zu, \"prompt\": \"%s\", \"text\": \"%s\", \"n_tokens\": %zu, \"ttft_ms\": %.3f}\n",
                        i, json_escape(prompts[i]).c_str(), json_escape(r.text).c_str(), r.tokens.size(),
                        r.ttft_seconds * 1e3);
        } else {
            std::printf("%s%s\n", prompts[i].c_str(), r.text.c_str());
        }
        std::fflush(stdout);
    }
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    const ember::EngineStats st = engine.stats();
    std::sort(ttft.begin(), ttft.end());
    const double ttft_median = ttft.empty() ? 0.0 : ttft[ttft.size() / 2];
    std::fprintf(stderr,
                 "ember-batch: %zu prompts, parallel %d: %lld prompt tokens, %lld generated in %.2f s: "
                 "%.1f tokens/s aggregate decode, %lld steps, median TTFT %.1f ms; prefix cache %lld hits "
                 "(%lld tokens); KV pool %.1f MiB, peak %lld of %lld pages, %lld pauses\n",
                 prompts.size(), o.parallel, static_cast<long long>(prompt_tokens),
                 static_cast<long long>(generated), wall, wall > 0 ? static_cast<double>(generated) / wall : 0.0,
                 static_cast<long long>(st.steps), ttft_median * 1e3, static_cast<long long>(st.prefix_hits),
                 static_cast<long long>(st.prefix_hit_tokens), static_cast<double>(st.kv_bytes) / (1 << 20),
                 static_cast<long long>(st.kv_pages_peak), static_cast<long long>(st.kv_pages),
                 static_cast<long long>(st.preemptions));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-batch", [&] {
        const ember_batch::Options o = ember_batch::parse_options(argc, argv);
        if (o.help) {
            std::fputs(ember_batch::usage_text(), stdout);
            return 0;
        }
        return run(o);
    });
}

// ember-bench: prompt processing (ppN) and generation (tgN) speed like llama-bench, each set
// against the machine's own limits measured in the same run:
//   - tg: weight bytes (and the KV cache's, which grow with -d) read per token / read bandwidth
//         (streaming-read benchmark, same threads);
//         single-sequence tg rows set each repetition against a read pass run just before it (a
//         shared machine's bandwidth drifts within seconds) and report the median fraction
//   - pp: 2 x matrix parameters per token / arithmetic peak (int8 vpdpbusd for quantized
//         models, f32 FMA for F32/F16/BF16), register-resident loops on all threads.
//
//   - ppP xN / tgG xN (--parallel N,...): N sequences batched, aggregate tokens/s (as
//     llama-batched-bench): N prompts of P tokens, then G steps decoding all N at once
//   - load: Model::load to the logits of a one-token prompt (ms), and the peak RSS it adds
//
//   ember-bench -m model.gguf [-p 512] [-n 128] [-d 0] [-t 2] [-r 5] [-o md|csv|json] [--isa]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <unistd.h>

#include "api/model_impl.hpp"
#include "bench_support/membench.hpp"
#include "bench_support/parallel_bench.hpp"
#include "bench_support/peak.hpp"
#include "cli/args.hpp"
#include "cli/report.hpp"
#include "common/mapped_pages.hpp"
#include "ember/model.hpp"
#include "ember/session.hpp"
#include "ember/text.hpp"
#include "kernels/cpu_features.hpp"
#include "kernels/dispatch.hpp"
#include "model/kv_type.hpp"
#include "runtime/memory.hpp"
#include "runtime/parallel.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
    std::vector<std::string> models;
    int n_prompt = 512, n_gen = 128, depth = 0, threads = 2, reps = 5;
    std::vector<int> parallel;  // --parallel: sequence counts (empty: the single-sequence tests)
    std::string output = "md";
    std::size_t bw_mib = 0;  // 0: 1024, or 4x the last-level cache if that is more
    bool limits = true;
    bool load = true;
    bool mmap = true;  // --no-mmap: ModelOptions::use_mmap = false
    ember::KvType kv_type = ember::KvType::f32;  // --kv-type
};

struct Peak {
    double ops_per_second = 0.0;
    std::string kernel;
};

struct Result {
    std::string model, type, test;
    std::int64_t size_bytes = 0, params = 0, matrix_params = 0, bytes_per_token = 0;
    int threads = 0, n_tokens = 0;
    double mean = 0.0, sd = 0.0;
    double limit_fraction = -1.0;  // < 0: not measured
    std::string limit_kind;        // "bandwidth", "int8 peak", "f32 peak"
    double limit_gbs = 0.0;        // tg rows: median of the read passes run before each repetition
    int depth = 0;                 // tokens in the context before the test
    // load row: mean and sd are milliseconds; peak RSS and KV cache bytes
    std::int64_t peak_rss_bytes = 0, kv_bytes = 0;
};

constexpr ember::cli::IntRange kBenchThreadRange{1, 1024};
constexpr ember::cli::IntRange kRepsRange{1, 1000};
constexpr ember::cli::IntRange kBandwidthRange{1, 65536};
constexpr ember::cli::IntRange kParallelRange{1, 1024};

void usage() {
    std::printf("usage: ember-bench -m MODEL.gguf [-m ...] [-p 512] [-n 128] [-d 0] [-t 2] [-r 5]\n"
                "                   [--parallel 1,4,16] [-o md|csv|json] [--bw-mib 1024] [--no-limits] [--no-load] [--no-mmap]\n"
                "                   [--kv-type f32|f16|q8_0] [--isa]\n"
                "  -p N        prompt processing test: one prefill of N random tokens, %s (0: skip)\n"
                "  -n N        generation test: N single-token decodes, %s (0: skip)\n"
                "  -d N        run both tests after N tokens already in the context, %s\n"
                "              (llama-bench's -d)\n"
                "  --parallel N,...  instead of -p/-n's single sequence: N sequences batched, each\n"
                "              N in %s; rows ppP xN (N prompts of P tokens) and tgG xN (G\n"
                "              steps decoding all N at once), aggregate t/s (llama-batched-bench)\n"
                "  --no-load   skip the load row (load to first token: ms and peak RSS)\n"
                "  --no-mmap   read the file into memory instead of mapping it (llama-bench's -mmp 0)\n"
                "  --kv-type T KV cache type: f32 (default), f16, q8_0 (llama-bench's -ctk/-ctv)\n"
                "  -t N        threads, %s (default 2)\n"
                "  -r N        repetitions, %s\n"
                "  --bw-mib N  buffer of the bandwidth measurement in MiB, %s (default 1024, or 4x the\n"
                "              last-level cache if that is more)\n"
                "  --isa       print the kernel ISA in use and exit\n",
                describe(ember::cli::kTokenCountRange).c_str(), describe(ember::cli::kTokenCountRange).c_str(),
                describe(ember::cli::kTokenCountRange).c_str(), describe(kParallelRange).c_str(),
                describe(kBenchThreadRange).c_str(), describe(kRepsRange).c_str(),
                describe(kBandwidthRange).c_str());
}

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Runs fn(iters) on n_threads threads at once; returns the total operations per second.
template <class Fn>
double run_peak(int n_threads, Fn fn) {
    std::int64_t iters = 1 << 16;
    for (;;) {  // grow until one run takes >= 0.2 s
        // Plain threads, all started at once (a peak needs every core busy for the whole run).
        std::vector<std::int64_t> ops(static_cast<std::size_t>(std::max(n_threads, 1)), 0);
        const auto t0 = Clock::now();
        {
            std::vector<std::jthread> threads;
            for (int t = 1; t < n_threads; ++t) {
                threads.emplace_back([&, t] { ops[static_cast<std::size_t>(t)] = fn(iters); });
            }
            ops[0] = fn(iters);
        }
        const double s = seconds(t0);
        std::int64_t total = 0;
        for (const std::int64_t o : ops) total += o;
        if (s >= 0.2) return static_cast<double>(total) / s;
        iters *= s > 0.01 ? static_cast<std::int64_t>(std::ceil(0.25 / s)) : 16;
    }
}

Peak measure_int8_peak(int n_threads) {
    using namespace ember::kernels;
    const Isa isa = active_isa();
    Peak p;
    std::int64_t (*fn)(std::int64_t, std::int32_t*) = peak_int8_scalar;
    p.kernel = "scalar imul";
#if defined(__x86_64__)
    if (isa_extends(isa, Isa::avx512)) {
        fn = peak_int8_avx512;
        p.kernel = "vpdpbusd zmm";
    } else if (isa == Isa::avx2_vnni) {
        fn = peak_int8_avx2_vnni;
        p.kernel = "vpdpbusd ymm";
    } else if (isa == Isa::avx2) {
        fn = peak_int8_avx2;
        p.kernel = "vpmaddubsw ymm";
    }
#endif
    p.ops_per_second = run_peak(n_threads, [fn](std::int64_t it) {
        std::int32_t sink = 1;
        return fn(it, &sink);
    });
    return p;
}

Peak measure_f32_peak(int n_threads) {
    using namespace ember::kernels;
    const Isa isa = active_isa();
    Peak p;
    std::int64_t (*fn)(std::int64_t, float*) = peak_f32_scalar;
    p.kernel = "scalar mul+add";
#if defined(__x86_64__)
    if (isa_extends(isa, Isa::avx512)) {
        fn = peak_f32_avx512;
        p.kernel = "vfmadd zmm";
    } else if (isa_extends(isa, Isa::avx2)) {
        fn = peak_f32_avx2;
        p.kernel = "vfmadd ymm";
    }
#endif
    p.ops_per_second = run_peak(n_threads, [fn](std::int64_t it) {
        float sink = 1.0f;
        return fn(it, &sink);
    });
    return p;
}

/// The vdpbf16ps peak where BF16 weights run on it (AVX-512 with AVX512_BF16), else none.
Peak measure_bf16_peak(int n_threads) {
    using namespace ember::kernels;
    Peak p;
#if defined(__x86_64__)
    if (isa_extends(active_isa(), Isa::avx512) && cpu_features().avx512_bf16) {
        p.kernel = "vdpbf16ps zmm";
        p.ops_per_second = run_peak(n_threads, [](std::int64_t it) {
            float sink = 1.0f;
            return peak_bf16_avx512(it, &sink);
        });
    }
#endif
    return p;
}

void mean_sd(const std::vector<double>& v, double& mean, double& sd) {
    mean = 0.0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double ss = 0.0;
    for (double x : v) ss += (x - mean) * (x - mean);
    sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
}

bool is_float_type(std::string_view t) { return t == "F32" || t == "F16" || t == "BF16"; }

std::string format_size(double bytes) {
    char b[64];
    if (bytes >= 1024.0 * 1024 * 1024) std::snprintf(b, sizeof b, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    else std::snprintf(b, sizeof b, "%.2f MiB", bytes / (1024.0 * 1024));
    return b;
}

std::string format_params(double n) {
    char b[64];
    if (n >= 1e9) std::snprintf(b, sizeof b, "%.2f B", n / 1e9);
    else if (n >= 1e6) std::snprintf(b, sizeof b, "%.2f M", n / 1e6);
    else std::snprintf(b, sizeof b, "%.2f K", n / 1e3);
    return b;
}

// A "VmHWM:" (peak) or "VmRSS:" (now) line of /proc/self/status, in bytes; 0 where there is none.
std::int64_t status_bytes(const char* key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) == 0) return std::stoll(line.substr(std::char_traits<char>::length(key))) * 1024;
    }
    return 0;
}

// Resets the peak resident set to the current one (Linux: "5" into /proc/self/clear_refs).
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Load to first token, `reps` times: a fresh Model, a Session of `context` tokens, the logits
// of one token. Peak RSS is the highest of the runs, each measured from the RSS before it.
Result bench_load(const std::string& path, const Args& a, int context) {
    std::vector<double> ms;
    Result res;
    for (int r = 0; r < a.reps; ++r) {
        // What this load adds: the process already holds the benchmarked copy of the model.
        reset_peak_rss();
        const std::int64_t before = status_bytes("VmRSS:");
        const auto t0 = Clock::now();
        ember::ModelOptions mo;
        mo.threads = a.threads;
        mo.use_mmap = a.mmap;
        const ember::Model model = ember::Model::load(path, mo);
        ember::SessionOptions so;
        so.threads = a.threads;
        so.context = context;
        so.kv_type = a.kv_type;
        ember::Session session(model, so);
        const ember::Token first = model.bos() >= 0 ? model.bos() : 0;
        if (session.decode(first) != ember::Status::ok) throw ember::Error(path + ": the first token failed");
        ms.push_back(1e3 * seconds(t0));
        res.peak_rss_bytes = std::max(res.peak_rss_bytes, status_bytes("VmHWM:") - before);
        const ember::ModelInfo& info = model.info();
        res.kv_bytes = 2 * static_cast<std::int64_t>(sizeof(float)) * info.n_layer * context *
                       (info.n_embd / std::max<std::int64_t>(info.n_head, 1)) * info.n_head_kv;
    }
    mean_sd(ms, res.mean, res.sd);
    res.test = "load";
    return res;
}

struct Limits {
    ember::BandwidthMeasure bw;
    Peak int8_peak, f32_peak, bf16_peak;
    std::size_t rep_bw_bytes = 0;  // buffer of the read pass before each tg repetition

    /// The arithmetic ceiling of prefill for a weight type, and its name in the report: BF16 runs
    /// on vdpbf16ps where measured (twice the f32 FMA rate), other float types on f32 FMA.
    const Peak& prefill_peak(std::string_view type, std::string& kind) const {
        if (type == "BF16" && bf16_peak.ops_per_second > 0) {
            kind = "bf16 peak";
            return bf16_peak;
        }
        const bool fl = is_float_type(type);
        kind = fl ? "f32 peak" : "int8 peak";
        return fl ? f32_peak : int8_peak;
    }
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Weights read in place (F16, BF16, F32, ...) decode ~1.5x slower from a file cached in base-page
// folios (4 KiB on x86-64), as it was written, than from one read cold (docs/memory.md): say so
// when most of what the tests touched of the mapping is not mapped by huge pages.
void warn_small_pages(const std::string& path) {
    const auto pages = ember::tools::mapped_file_pages(path);
    constexpr std::uint64_t kMiB = 1 << 20, kWorthSaying = 64 * kMiB;
    if (!pages || pages->resident_bytes < kWorthSaying || pages->huge_bytes * 2 >= pages->resident_bytes) return;
    std::fprintf(stderr,
                 "ember-bench: %s: %llu of the %llu MiB read through the mapping are in %ld KiB pages, not "
                 "huge-page mappings (the page cache holds the file as it was written or copied); weights "
                 "read in place decode faster once it is read cold: "
                 "dd if=FILE iflag=nocache count=0 (docs/memory.md)\n",
                 ember::printable(path).c_str(),
                 static_cast<unsigned long long>((pages->resident_bytes - pages->huge_bytes) / kMiB),
                 static_cast<unsigned long long>(pages->resident_bytes / kMiB), ::sysconf(_SC_PAGESIZE) / 1024);
}

// Loads the model and creates its session (where bad files and sizes fail, before any output),
// calls after_load(weight type), then runs the tests against the limits.
std::vector<Result> bench_model(const std::string& path, const Args& a,
                                const std::function<void(std::string_view)>& after_load,
                                const Limits& limits) {
    ember::ModelOptions mo;
    mo.threads = a.threads;
    mo.use_mmap = a.mmap;
    const ember::Model model = ember::Model::load(path, mo);
    const ember::ModelInfo& info = model.info();
    std::int64_t matrix_bytes = 0, matrix_params = 0;
    for (const auto* w : ember::detail::ModelAccess::impl(model)->weights.matrices()) {
        matrix_bytes += static_cast<std::int64_t>(w->bytes());
        matrix_params += w->n_rows() * w->n_cols();
    }
    const int context = a.depth + std::max({a.n_prompt, a.n_gen, 1});
    // A decode step also reads every cached key and value (a sliding-window layer the last
    // n_swa): the tg test's mean over its steps, which see depth + 1 .. depth + n_gen positions.
    std::int64_t kv_bytes_per_token = 0;
    {
        const auto& c = ember::detail::ModelAccess::impl(model)->config;
        const std::int64_t row = static_cast<std::int64_t>(ember::model::kv_row_bytes(a.kv_type, c.n_embd_kv(), c.head_dim));
        for (std::int64_t il = 0; il < c.n_layer; ++il) {
            std::int64_t sum = 0;
            for (std::int64_t p = a.depth + 1; p <= a.depth + a.n_gen; ++p) sum += c.is_local(il) && c.n_swa > 0 ? std::min(p, c.n_swa) : p;
            kv_bytes_per_token += a.n_gen > 0 ? 2 * row * sum / a.n_gen : 0;
        }
    }
    ember::SessionOptions so;
    so.threads = a.threads;
    so.context = context;
    so.kv_type = a.kv_type;
    so.batch = std::max({a.n_prompt, std::min(a.depth, 512), 1});
    ember::Session session(model, so);
    after_load(info.file_type);
    Result load;
    if (a.load) load = bench_load(path, a, context);
    const ember::BandwidthMeasure& bw = limits.bw;
    std::mt19937 rng(1234);
    std::uniform_int_distribution<ember::Token> pick(0, static_cast<ember::Token>(model.n_vocab() - 1));
    const ember::Token bos = model.bos() >= 0 ? model.bos() : 0;

    Result base;
    base.model = ember::printable(std::filesystem::path(path).filename().string());  // shown in every format
    base.type = info.file_type;
    base.size_bytes = info.weight_bytes;
    base.params = info.n_params;
    base.matrix_params = matrix_params;
    base.bytes_per_token = matrix_bytes;
    base.threads = a.threads;
    base.depth = a.depth;
    std::vector<Result> out;
    // -d: the context the tests start from (random tokens after BOS), refilled before each run.
    std::vector<ember::Token> ctx(static_cast<std::size_t>(a.depth));
    auto start = [&] {
        session.reset();
        if (ctx.empty()) return;
        for (auto& t : ctx) t = pick(rng);
        ctx[0] = bos;
        if (session.prefill(ctx) != ember::Status::ok) throw ember::Error(path + ": the depth prefill failed");
    };
    const std::string at_depth = a.depth > 0 ? " @ d" + std::to_string(a.depth) : "";

    auto check = [&](ember::Status s) {
        if (s != ember::Status::ok) throw ember::Error(path + ": forward pass failed");
    };
    if (!a.parallel.empty()) {
        const auto token = [&] { return pick(rng); };
        for (int n : a.parallel) {
            const ember::bench::ParallelTimes t =
                ember::bench::run_parallel(model, n, a.n_prompt, a.n_gen, a.threads, a.reps, a.kv_type, token);
            const std::string xn = " x" + std::to_string(n);
            const auto row = [&](const std::vector<double>& secs, int per_seq, const std::string& test) {
                Result res = base;
                res.test = test + xn;
                res.n_tokens = per_seq * n;
                std::vector<double> tps;
                for (double sec : secs) tps.push_back(res.n_tokens / sec);
                mean_sd(tps, res.mean, res.sd);
                return res;
            };
            if (a.n_prompt > 0) {
                Result res = row(t.prefill_seconds, a.n_prompt, "pp" + std::to_string(a.n_prompt));
                const Peak& peak = limits.prefill_peak(info.file_type, res.limit_kind);
                if (peak.ops_per_second > 0) {
                    res.limit_fraction = res.mean * 2.0 * static_cast<double>(matrix_params) / peak.ops_per_second;
                }
                out.push_back(res);
            }
            if (a.n_gen > 0) {
                // One pass reads the weights once for all n sequences.
                Result res = row(t.decode_seconds, a.n_gen, "tg" + std::to_string(a.n_gen));
                res.limit_kind = "bandwidth";
                if (bw.bytes_per_second > 0) {
                    res.limit_fraction = res.mean / n * static_cast<double>(matrix_bytes) / bw.bytes_per_second;
                }
                out.push_back(res);
            }
        }
    }
    if (a.n_prompt > 0 && a.parallel.empty()) {
        std::vector<ember::Token> prompt(static_cast<std::size_t>(a.n_prompt));
        auto fill = [&] {
            for (auto& t : prompt) t = pick(rng);
            if (a.depth == 0) prompt[0] = bos;
        };
        fill();
        start();
        check(session.prefill(prompt));  // warm-up
        std::vector<double> tps;
        for (int r = 0; r < a.reps; ++r) {
            fill();
            start();
            const auto t0 = Clock::now();
            check(session.prefill(prompt));
            tps.push_back(a.n_prompt / seconds(t0));
        }
        Result res = base;
        res.test = "pp" + std::to_string(a.n_prompt) + at_depth;
        res.n_tokens = a.n_prompt;
        mean_sd(tps, res.mean, res.sd);
        const Peak& peak = limits.prefill_peak(info.file_type, res.limit_kind);
        if (peak.ops_per_second > 0) {
            res.limit_fraction = res.mean * 2.0 * static_cast<double>(matrix_params) / peak.ops_per_second;
        }
        out.push_back(res);
    }
    if (a.n_gen > 0 && a.parallel.empty()) {
        auto run_gen = [&](int n) {
            ember::Token t = a.depth == 0 ? bos : pick(rng);
            for (int i = 0; i < n; ++i) {
                check(session.decode(t));
                t = pick(rng);
            }
        };
        start();
        run_gen(1);  // warm-up
        std::vector<double> tps, rep_bw, fractions;
        for (int r = 0; r < a.reps; ++r) {
            start();
            if (bw.bytes_per_second > 0) {  // the bandwidth of this moment (best of 3 passes)
                rep_bw.push_back(ember::measure_read_bandwidth(limits.rep_bw_bytes, a.threads, 3).bytes_per_second);
            }
            const auto t0 = Clock::now();
            run_gen(a.n_gen);
            tps.push_back(a.n_gen / seconds(t0));
            if (!rep_bw.empty()) fractions.push_back(tps.back() * static_cast<double>(matrix_bytes + kv_bytes_per_token) / rep_bw.back());
        }
        Result res = base;
        res.test = "tg" + std::to_string(a.n_gen) + at_depth;
        res.n_tokens = a.n_gen;
        res.bytes_per_token = matrix_bytes + kv_bytes_per_token;
        mean_sd(tps, res.mean, res.sd);
        res.limit_kind = "bandwidth";
        if (!fractions.empty()) {
            res.limit_fraction = median(fractions);
            res.limit_gbs = median(rep_bw) / 1e9;
        }
        out.push_back(res);
    }
    if (a.load) {
        Result row = base;
        row.test = load.test;
        row.mean = load.mean;
        row.sd = load.sd;
        row.peak_rss_bytes = load.peak_rss_bytes;
        row.kv_bytes = load.kv_bytes;
        out.push_back(row);
    }
    if (a.mmap) warn_small_pages(path);
    return out;
}

int run(int argc, char** argv) {
    using ember::cli::UsageError;
    Args a;
    bool isa_only = false;
    ember::cli::ArgReader args(argc, argv);
    while (args.next()) {
        if (args.is("-h", "--help")) {
            usage();
            return 0;
        } else if (args.is("--isa")) isa_only = true;
        else if (args.is("--no-limits")) a.limits = false;
        else if (args.is("--no-load")) a.load = false;
        else if (args.is("--no-mmap")) a.mmap = false;
        else if (args.is("--kv-type")) a.kv_type = args.kv_type_value();
        else if (args.is("-m")) a.models.push_back(args.value());
        else if (args.is("-p")) a.n_prompt = static_cast<int>(args.int_value(ember::cli::kTokenCountRange));
        else if (args.is("-n")) a.n_gen = static_cast<int>(args.int_value(ember::cli::kTokenCountRange));
        else if (args.is("-d")) a.depth = static_cast<int>(args.int_value(ember::cli::kTokenCountRange));
        else if (args.is("-t")) a.threads = static_cast<int>(args.int_value(kBenchThreadRange));
        else if (args.is("-r")) a.reps = static_cast<int>(args.int_value(kRepsRange));
        else if (args.is("-o")) {
            a.output = args.value();
            if (a.output != "md" && a.output != "csv" && a.output != "json") {
                throw UsageError("-o: '" + a.output + "' is not one of md, csv, json");
            }
        } else if (args.is("--parallel")) {
            a.parallel.clear();
            const std::string list = args.value();
            std::size_t at = 0;
            while (true) {
                const std::size_t comma = list.find(',', at);
                const std::string item = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
                a.parallel.push_back(static_cast<int>(ember::cli::parse_int("--parallel", item, kParallelRange)));
                if (comma == std::string::npos) break;
                at = comma + 1;
            }
        } else if (args.is("--bw-mib")) a.bw_mib = static_cast<std::size_t>(args.int_value(kBandwidthRange));
        else args.unknown();
    }
    const std::string isa(ember::kernels::isa_name());
    if (isa_only) {
        std::printf("active ISA: %s (detected: %s)\n", isa.c_str(),
                    std::string(ember::kernels::isa_name(ember::kernels::detected_isa())).c_str());
        return 0;
    }
    if (a.models.empty()) throw UsageError("no model given (-m MODEL.gguf)");
    if (!a.parallel.empty() && a.depth > 0) throw UsageError("--parallel and -d cannot be combined");

    Limits limits;
    bool measured = false, measured_bf16 = false;
    // Bandwidth and the int8/f32 peaks once, after the first model loaded; the bf16 peak with the
    // first BF16 model (only BF16 weights run on it).
    const auto measure_limits = [&](std::string_view type) {
        if (!a.limits) return;
        if (type == "BF16" && !measured_bf16) {
            measured_bf16 = true;
            limits.bf16_peak = measure_bf16_peak(a.threads);
        }
        if (measured) return;
        measured = true;
        const std::uint64_t bytes = a.bw_mib != 0 ? std::uint64_t{a.bw_mib} << 20 : ember::beyond_cache_bytes(std::size_t{1} << 30);
        ember::check_memory(bytes, "--bw-mib " + std::to_string(bytes >> 20) + " (the bandwidth buffer)");
        std::fprintf(stderr, "ember-bench: measuring read bandwidth (%llu MiB, %d threads) and peaks...\n",
                     static_cast<unsigned long long>(bytes >> 20), a.threads);
        limits.bw = ember::measure_read_bandwidth(bytes, a.threads);
        // Each tg repetition's read pass: smaller, but still beyond the caches (weights of a
        // model worth measuring stream from memory too).
        limits.rep_bw_bytes = std::min<std::uint64_t>(bytes, ember::beyond_cache_bytes(std::size_t{256} << 20));
        limits.int8_peak = measure_int8_peak(a.threads);
        limits.f32_peak = measure_f32_peak(a.threads);
    };
    std::vector<Result> results;
    for (const auto& m : a.models) {
        const auto announce = [&](std::string_view type) {
            measure_limits(type);
            std::fprintf(stderr, "ember-bench: %s\n", ember::printable(m).c_str());
        };
        for (auto& r : bench_model(m, a, announce, limits)) results.push_back(std::move(r));
    }
    const ember::BandwidthMeasure& bw = limits.bw;
    const Peak& int8_peak = limits.int8_peak;
    const Peak& f32_peak = limits.f32_peak;

    const double gbs = bw.bytes_per_second / 1e9, i8 = int8_peak.ops_per_second / 1e9,
                 f32 = f32_peak.ops_per_second / 1e9, bf16 = limits.bf16_peak.ops_per_second / 1e9;
    if (a.output == "md") {
        std::printf("ISA: %s | threads: %d | read bandwidth: %.1f GB/s (median %.1f, %zu MiB buffer) | "
                    "int8 peak: %.0f GOPS (%s) | f32 peak: %.0f GFLOPS (%s)",
                    isa.c_str(), a.threads, gbs, bw.median_bytes_per_second / 1e9, bw.buffer_bytes >> 20, i8,
                    int8_peak.kernel.c_str(), f32, f32_peak.kernel.c_str());
        if (bf16 > 0) std::printf(" | bf16 peak: %.0f GFLOPS (%s)", bf16, limits.bf16_peak.kernel.c_str());
        std::printf("\n\n");
        std::printf("| model | size | params | type | threads | test | t/s | of limit |\n");
        std::printf("| ----- | ---: | -----: | ---- | ------: | ---- | --: | -------: |\n");
        for (const auto& r : results) {
            if (r.test == "load") {
                std::printf("| %s | %s | %s | %s | %d | load | %.1f ± %.1f ms | peak RSS %s (KV cache %s) |\n",
                            r.model.c_str(), format_size(static_cast<double>(r.size_bytes)).c_str(),
                            format_params(static_cast<double>(r.params)).c_str(), r.type.c_str(), r.threads,
                            r.mean, r.sd, format_size(static_cast<double>(r.peak_rss_bytes)).c_str(),
                            format_size(static_cast<double>(r.kv_bytes)).c_str());
                continue;
            }
            char limit[64] = "n/a";
            if (r.limit_fraction >= 0) {
                std::snprintf(limit, sizeof limit, "%.1f%% %s", 100.0 * r.limit_fraction, r.limit_kind.c_str());
            }
            if (r.limit_gbs > 0) {
                const std::size_t used = std::strlen(limit);
                std::snprintf(limit + used, sizeof limit - used, " (%.1f GB/s)", r.limit_gbs);
            }
            std::printf("| %s | %s | %s | %s | %d | %s | %.2f ± %.2f | %s |\n", r.model.c_str(),
                        format_size(static_cast<double>(r.size_bytes)).c_str(),
                        format_params(static_cast<double>(r.params)).c_str(), r.type.c_str(), r.threads,
                        r.test.c_str(), r.mean, r.sd, limit);
        }
    } else if (a.output == "csv") {
        std::printf("model,size_bytes,params,type,threads,test,n_tokens,tps_mean,tps_sd,limit_fraction,limit,"
                    "bytes_per_token,isa,bandwidth_gbs,int8_peak_gops,f32_peak_gflops,ms_mean,ms_sd,peak_rss_bytes,"
                    "kv_bytes\n");
        for (const auto& r : results) {
            if (r.test == "load") {
                std::printf("%s,%lld,%lld,%s,%d,load,,,,,,%lld,%s,%.3f,%.1f,%.1f,%.3f,%.3f,%lld,%lld\n", r.model.c_str(),
                            static_cast<long long>(r.size_bytes), static_cast<long long>(r.params), r.type.c_str(),
                            r.threads, static_cast<long long>(r.bytes_per_token), isa.c_str(), gbs, i8, f32, r.mean,
                            r.sd, static_cast<long long>(r.peak_rss_bytes), static_cast<long long>(r.kv_bytes));
                continue;
            }
            std::printf("%s,%lld,%lld,%s,%d,%s,%d,%.4f,%.4f,%.4f,%s,%lld,%s,%.3f,%.1f,%.1f,,,,\n", r.model.c_str(),
                        static_cast<long long>(r.size_bytes), static_cast<long long>(r.params), r.type.c_str(),
                        r.threads, r.test.c_str(), r.n_tokens, r.mean, r.sd, r.limit_fraction,
                        r.limit_kind.c_str(), static_cast<long long>(r.bytes_per_token), isa.c_str(), gbs, i8, f32);
        }
    } else {
        std::printf("{\n  \"isa\": \"%s\",\n  \"threads\": %d,\n  \"bandwidth_gbs\": %.3f,\n"
                    "  \"bandwidth_median_gbs\": %.3f,\n  \"int8_peak_gops\": %.1f,\n  \"int8_kernel\": \"%s\",\n"
                    "  \"f32_peak_gflops\": %.1f,\n  \"f32_kernel\": \"%s\",\n  \"bf16_peak_gflops\": %.1f,\n"
                    "  \"results\": [",
                    isa.c_str(), a.threads, gbs, bw.median_bytes_per_second / 1e9, i8, int8_peak.kernel.c_str(),
                    f32, f32_peak.kernel.c_str(), bf16);
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto& r = results[i];
            if (r.test == "load") {
                std::printf("%s\n    {\"model\": \"%s\", \"size_bytes\": %lld, \"params\": %lld, \"type\": \"%s\", "
                            "\"threads\": %d, \"test\": \"load\", \"ms_mean\": %.4f, \"ms_sd\": %.4f, "
                            "\"peak_rss_bytes\": %lld, \"kv_bytes\": %lld}",
                            i ? "," : "", ember::json_escape(r.model).c_str(), static_cast<long long>(r.size_bytes),
                            static_cast<long long>(r.params), r.type.c_str(), r.threads, r.mean, r.sd,
                            static_cast<long long>(r.peak_rss_bytes), static_cast<long long>(r.kv_bytes));
                continue;
            }
            std::printf("%s\n    {\"model\": \"%s\", \"size_bytes\": %lld, \"params\": %lld, \"type\": \"%s\", "
                        "\"threads\": %d, \"test\": \"%s\", \"n_tokens\": %d, \"tps_mean\": %.4f, "
                        "\"tps_sd\": %.4f, \"limit_fraction\": %.4f, \"limit\": \"%s\", \"bytes_per_token\": %lld, "
                        "\"depth\": %d, \"limit_bandwidth_gbs\": %.3f}",
                        i ? "," : "", ember::json_escape(r.model).c_str(), static_cast<long long>(r.size_bytes),
                        static_cast<long long>(r.params), r.type.c_str(), r.threads, r.test.c_str(), r.n_tokens,
                        r.mean, r.sd, r.limit_fraction, r.limit_kind.c_str(),
                        static_cast<long long>(r.bytes_per_token), r.depth, r.limit_gbs);
        }
        std::printf("\n  ]\n}\n");
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return ember::cli::run_tool("ember-bench", [&] { return run(argc, argv); });
}

// The server's Prometheus metrics (GET /metrics, text format 0.0.4): requests by endpoint and
// status, prompt and generated tokens, time-to-first-token and time-per-output-token
// histograms, and the engine's gauges at scrape time. Thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace ember_server {

/// A cumulative histogram with fixed upper bounds (seconds).
class Histogram {
public:
    static constexpr std::array<double, 12> kBounds{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                    0.1,   0.25,   0.5,   1.0,  2.5,   10.0};
    void observe(double value);
    /// The _bucket, _sum and _count lines of `name`.
    std::string render(const std::string& name) const;

private:
    std::array<std::uint64_t, kBounds.size()> buckets_{};  // non-cumulative counts
    std::uint64_t count_ = 0;
    double sum_ = 0.0;
};

/// The engine's state when scraped (from ember::EngineStats and the server).
struct EngineGauges {
    std::int64_t running = 0, queued = 0, waiting_http = 0;
    std::int64_t kv_pages = 0, kv_pages_free = 0;
    std::int64_t prefix_hits = 0, prefix_hit_tokens = 0, preemptions = 0, steps = 0;
    bool loaded = false;
};

class Metrics {
public:
    /// A request answered: endpoint ("/v1/completions") and HTTP status.
    void count_request(const std::string& endpoint, int status);
    /// A finished generation: its tokens and timings (ttft 0: no token); `cancelled` when it
    /// was stopped before its end (client gone, timeout, shutdown).
    void observe_generation(std::int64_t prompt_tokens, std::int64_t generated_tokens, double ttft_seconds,
                            double total_seconds, bool cancelled = false);
    std::string render(const EngineGauges& gauges) const;

private:
    mutable std::mutex mutex_;
    std::map<std::pair<std::string, int>, std::uint64_t> requests_;
    std::uint64_t prompt_tokens_ = 0, generated_tokens_ = 0, cancelled_ = 0;
    Histogram ttft_, tpot_;
};

}  // namespace ember_server

// The float kernels that run in the forward pass (FloatKernels of every ISA: RMSNorm, SwiGLU,
// GEGLU, residual add, RoPE in both layouts, attention) against their scalar twins, and the
// scalar twins against double-precision formulas. Sizes cover empty, sub-vector, exact and
// ragged lengths; inputs sit at SIMD-unaligned addresses.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/float_ops.hpp"
#include "model/kv_type.hpp"
#include "model/rope.hpp"

using namespace ember::kernels;
using kernel_test::random_floats;

namespace {

const std::int64_t kSizes[] = {0, 1, 3, 4, 7, 8, 15, 16, 17, 31, 33, 64, 100, 288};

// Relative error of a float kernel against its twin: a few ulps of the result (exp/tanh are
// within 2-4 ulp in xsimd and libm, each op adds 0.5 ulp).
constexpr double kUlps = 8 * 1.2e-7;

ember::model::RopeParams rope_params(std::int64_t n_rot) {
    ember::model::RopeParams p;
    p.n_rot = n_rot;
    p.freq_base = 10000.0f;
    return p;
}

bool close(double got, double want) { return std::fabs(got - want) <= kUlps * std::fabs(want) + 1e-30; }

// Keys and values of n_pos positions stored as `type` as a paged cache stores them (key grids and
// value slabs, model/kv_type.hpp) for two heads, the second one attended (so the head offset
// matters), split into runs of `run` positions on pages of run + 1 positions that lie apart in
// memory (a spare position ends each page), as a paged cache hands them to attention.
struct KvRows {
    std::size_t head_bytes = 0;
    std::int64_t hd = 0, n_pos = 0, block = 0;
    std::vector<std::uint8_t> k, v;
    std::vector<ember::kernels::KvRun> runs;

    KvRows(ember::KvType t, std::int64_t head_dim, std::int64_t n, std::int64_t run)
        : hd(head_dim), n_pos(n), block(run + 1), type(t) {
        head_bytes = ember::model::kv_row_bytes(t, hd, hd);
        const auto kf = random_floats(static_cast<std::size_t>(n * 2 * hd), 11, 1.0f);
        const auto vf = random_floats(static_cast<std::size_t>(n * 2 * hd), 12, 1.0f);
        const std::int64_t pages = (n + run - 1) / run;
        const std::size_t head_page = static_cast<std::size_t>(block) * head_bytes, page_bytes = 2 * head_page;
        k.assign(static_cast<std::size_t>(pages) * page_bytes, 0);
        v = k;
        for (std::int64_t p = 0; p < n; ++p) {
            const std::int64_t pg = p / run, u = p % run + (pg % 2);  // odd pages start a position in
            const std::size_t base = static_cast<std::size_t>(pg) * page_bytes;
            if (p % run == 0) runs.push_back({&k[base + head_page], &v[base + head_page], 0, u, block});
            for (std::int64_t h = 0; h < 2; ++h) {
                const std::size_t at = base + static_cast<std::size_t>(h) * head_page;
                ember::model::kv_store_key(t, &kf[static_cast<std::size_t>((p * 2 + h) * hd)], &k[at], block, u, hd);
                ember::model::kv_store_value(t, &vf[static_cast<std::size_t>((p * 2 + h) * hd)], &v[at], block, u, hd);
            }
            runs.back().n += 1;
        }
    }
    std::int64_t n_runs() const { return static_cast<std::int64_t>(runs.size()); }
    /// The attended head's values as stored (rounded to the type), [n_pos][hd].
    std::vector<float> stored(bool keys) const {
        std::vector<float> out, row(static_cast<std::size_t>(hd));
        for (const auto& r : runs) {
            for (std::int64_t u = 0; u < r.n; ++u) {
                if (keys) {
                    ember::model::kv_load_key(type, r.k, block, r.first + u, hd, row.data());
                } else {
                    ember::model::kv_load_value(type, r.v, block, r.first + u, hd, row.data());
                }
                out.insert(out.end(), row.begin(), row.end());
            }
        }
        return out;
    }

private:
    ember::KvType type;
};

}  // namespace

TEST_CASE("scalar twins equal the formulas in double precision", "[float_ops]") {
    const FloatKernels& s = float_kernels(Isa::scalar);
    const auto x = random_floats(288, 1, 3.0f);
    const auto w = random_floats(288, 2);
    std::vector<float> out(288);
    s.rmsnorm(out.data(), x.data(), w.data(), 288, 1e-5f);
    double ss = 0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double scale = 1.0 / std::sqrt(ss / 288 + 1e-5);
    for (int i = 0; i < 288; ++i) REQUIRE(std::fabs(out[i] - x[i] * scale * w[i]) <= 4e-7 * std::fabs(x[i] * scale * w[i]) + 1e-30);
    std::vector<float> g(288), u(288);
    s.swiglu(g.data(), x.data(), w.data(), 288);
    s.geglu(u.data(), x.data(), w.data(), 288);
    for (int i = 0; i < 288; ++i) {
        const double xi = x[i];
        const double silu = xi / (1 + std::exp(-xi)), gelu = 0.5 * xi * (1 + std::tanh(0.7978845608028654 * (xi + 0.044715 * xi * xi * xi)));
        REQUIRE(std::fabs(g[i] - silu * w[i]) <= 1e-6 * std::fabs(silu * w[i]) + 1e-30);
        REQUIRE(std::fabs(u[i] - gelu * w[i]) <= 1e-6 * std::fabs(gelu * w[i]) + 1e-7);
    }
}

TEST_CASE("RoPE rotates pairs by pos * base^(-2i/n_rot) in both layouts and leaves the rest", "[float_ops][rope]") {
    const std::int64_t n_heads = 3, head_dim = 16, n_rot = 12, pos = 7;
    std::vector<float> cs(n_rot);
    ember::model::rope_angles(cs.data(), pos, rope_params(n_rot), {});
    const auto x = random_floats(static_cast<std::size_t>(n_heads * head_dim), 3);
    for (bool neox : {false, true}) {
        for (ember::kernels::Isa isa : kernel_test::available_isas()) {
            INFO(std::string(isa_name(isa)) + (neox ? " neox" : " normal"));
            std::vector<float> y = x;
            float_kernels(isa).rope(y.data(), n_heads, head_dim, n_rot, cs.data(), neox);
            for (std::int64_t h = 0; h < n_heads; ++h) {
                const float* xh = &x[static_cast<std::size_t>(h * head_dim)];
                const float* yh = &y[static_cast<std::size_t>(h * head_dim)];
                for (std::int64_t i = 0; i < n_rot / 2; ++i) {
                    const std::int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + n_rot / 2 : 2 * i + 1;
                    const double theta = pos * std::pow(10000.0, -2.0 * static_cast<double>(i) / n_rot);
                    // Angles are float (llama.cpp's iterative product): 1e-5 of a radian at pos 7.
                    REQUIRE(yh[i0] == Approx(xh[i0] * std::cos(theta) - xh[i1] * std::sin(theta)).margin(2e-5));
                    REQUIRE(yh[i1] == Approx(xh[i0] * std::sin(theta) + xh[i1] * std::cos(theta)).margin(2e-5));
                }
                for (std::int64_t i = n_rot; i < head_dim; ++i) REQUIRE(yh[i] == xh[i]);
            }
        }
    }
}

TEST_CASE("the forward pass's RoPE (model::rope_apply) is the active ISA's kernel", "[float_ops][rope]") {
    const std::int64_t n_rot = 64;
    std::vector<float> cs(n_rot);
    ember::model::rope_angles(cs.data(), 1234, rope_params(n_rot), {});
    const auto x = random_floats(2 * 80, 4);
    for (bool neox : {false, true}) {
        std::vector<float> live = x, kernel = x;
        ember::model::rope_apply(live.data(), 2, 80, n_rot,
                                 neox ? ember::model::RopeStyle::neox : ember::model::RopeStyle::normal, cs.data());
        float_kernels().rope(kernel.data(), 2, 80, n_rot, cs.data(), neox);
        CHECK(live == kernel);
    }
}

TEST_CASE("float kernels of every ISA match the scalar twins", "[float_ops][isa]") {
    const FloatKernels& s = float_kernels(Isa::scalar);
    for (Isa isa : kernel_test::available_isas()) {
        const FloatKernels& k = float_kernels(isa);
        for (std::int64_t n : kSizes) {
            INFO(std::string(isa_name(isa)) + " n=" + std::to_string(n));
            const auto a = random_floats(static_cast<std::size_t>(n) + 1, 5, 2.0f);
            const auto b = random_floats(static_cast<std::size_t>(n) + 1, 6);
            const float* pa = a.data() + 1;  // SIMD-unaligned
            const float* pb = b.data() + 1;
            std::vector<float> y1(static_cast<std::size_t>(n) + 1, -1.0f), y2 = y1;
            if (n > 0) {
                k.rmsnorm(y1.data() + 1, pa, pb, n, 1e-6f);
                s.rmsnorm(y2.data() + 1, pa, pb, n, 1e-6f);
                for (std::size_t i = 0; i < y1.size(); ++i) REQUIRE(close(y1[i], y2[i]));
            }
            k.swiglu(y1.data() + 1, pa, pb, n);
            s.swiglu(y2.data() + 1, pa, pb, n);
            for (std::size_t i = 0; i < y1.size(); ++i) REQUIRE(close(y1[i], y2[i]));
            k.geglu(y1.data() + 1, pa, pb, n);
            s.geglu(y2.data() + 1, pa, pb, n);
            for (std::size_t i = 0; i < y1.size(); ++i) REQUIRE(std::fabs(y1[i] - y2[i]) <= kUlps * std::fabs(y2[i]) + 1e-7);
            std::vector<float> r1 = a, r2 = a;
            k.add(r1.data() + 1, pb, n);
            s.add(r2.data() + 1, pb, n);
            REQUIRE(r1 == r2);  // one rounding per element: exact
            for (bool neox : {false, true}) {
                const std::int64_t n_rot = n / 2 * 2;
                std::vector<float> cs(static_cast<std::size_t>(n_rot) + 2);
                ember::model::rope_angles(cs.data(), 77 + n, rope_params(n_rot), {});
                std::vector<float> q1 = a, q2 = a;
                k.rope(q1.data() + 1, 1, n, n_rot, cs.data(), neox);
                s.rope(q2.data() + 1, 1, n, n_rot, cs.data(), neox);
                for (std::size_t i = 0; i < q1.size(); ++i) REQUIRE(std::fabs(q1[i] - q2[i]) <= 4e-7 * (std::fabs(a[i]) + 1));
            }
        }
    }
}

TEST_CASE("attention of every ISA and KV type matches the scalar twin, over paged runs", "[float_ops][attention][isa]") {
    using ember::KvType;
    for (const KvType type : {KvType::f32, KvType::f16, KvType::q8_0}) {
        const AttendFn ref = float_kernels(Isa::scalar).attend(type);
        for (Isa isa : kernel_test::available_isas()) {
            const AttendFn attend = float_kernels(isa).attend(type);
            for (std::int64_t hd : {8, 16, 20, 32, 48, 64, 128, 256}) {
                if (type == KvType::q8_0 && hd % 32 != 0) continue;
                for (std::int64_t n_pos : {1, 2, 5, 16, 17, 70, 600}) {  // 600: values summed in parts
                    for (std::int64_t n_q : {1, 3, 8}) {  // 8: groups of 4 queries where registers allow
                        for (const float softcap : {0.0f, 3.0f}) {
                            INFO(std::string(isa_name(isa)) + " " + ember::model::kv_type_name(type) + " hd=" +
                                 std::to_string(hd) + " n_pos=" + std::to_string(n_pos) + " n_q=" + std::to_string(n_q) +
                                 " softcap=" + std::to_string(softcap));
                            const auto q = random_floats(static_cast<std::size_t>(n_q * hd), static_cast<std::uint32_t>(hd + n_pos), 0.5f);
                            const KvRows kv(type, hd, n_pos, 5);
                            const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
                            std::vector<float> o1(static_cast<std::size_t>(n_q * hd)), o2 = o1;
                            std::vector<float> s1(static_cast<std::size_t>(attend_scratch_floats(n_q, n_pos, hd))), s2 = s1;
                            attend_row(attend, q.data(), n_q, hd, kv.runs.data(), kv.n_runs(), n_pos, scale, softcap,
                                   o1.data(), s1.data());
                            attend_row(ref, q.data(), n_q, hd, kv.runs.data(), kv.n_runs(), n_pos, scale, softcap,
                                o2.data(), s2.data());
                            // Each output is a convex combination of V values (|v| <= ~5): float dots
                            // in another order and exp within a few ulps move it by ~1e-6 at most.
                            for (std::size_t i = 0; i < o1.size(); ++i) REQUIRE(std::fabs(o1[i] - o2[i]) <= 2e-6);
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("attention gives the same bits however the positions are split into pages", "[float_ops][attention][isa]") {
    // Batch invariance over a paged cache: a sequence's pages lie wherever the pool put them.
    // 600 positions: the values are summed in parts of 256 keys where a head takes two passes.
    using ember::KvType;
    const std::int64_t hd = 64, n_q = 8;
    for (const std::int64_t n_pos : {std::int64_t{45}, std::int64_t{600}}) {
        for (const KvType type : {KvType::f32, KvType::f16, KvType::q8_0}) {
            for (Isa isa : kernel_test::available_isas()) {
                INFO(std::string(isa_name(isa)) + " " + ember::model::kv_type_name(type) + " n_pos=" + std::to_string(n_pos));
                const AttendFn attend = float_kernels(isa).attend(type);
                const auto q = random_floats(static_cast<std::size_t>(n_q * hd), 5, 0.5f);
                std::vector<float> want;
                for (const std::int64_t run : {n_pos, std::int64_t{16}, std::int64_t{7}, std::int64_t{1}}) {
                    const KvRows kv(type, hd, n_pos, run);
                    std::vector<float> out(static_cast<std::size_t>(n_q * hd)), scores(static_cast<std::size_t>(attend_scratch_floats(n_q, n_pos, hd)));
                    attend_row(attend, q.data(), n_q, hd, kv.runs.data(), kv.n_runs(), n_pos, 0.125f, 0.0f, out.data(),
                           scores.data());
                    if (want.empty()) want = out;
                    REQUIRE(out == want);
                }
            }
        }
    }
}

/// The runs from key `skip` on.
std::vector<KvRun> runs_from(const std::vector<KvRun>& runs, std::int64_t skip) {
    std::vector<KvRun> out;
    for (const KvRun& r : runs) {
        const std::int64_t drop = std::min(skip, r.n);
        skip -= drop;
        if (drop < r.n) out.push_back({r.k, r.v, r.n - drop, r.first + drop, r.block});
    }
    return out;
}

TEST_CASE("a row attended in a block gets the bits it gets alone", "[float_ops][attention][isa]") {
    // Batch invariance across blocks: a prefill chunk's rows share each key tile, each row
    // reading its own keys (causal; sliding windows start later), in rows wider than their heads
    // (stride), like the decoder. Alone, a row gets the runs from its first key. Seven heads a
    // row: groups of 4, 2 and 1 queries where the registers allow (AVX-512), 1 head alone below.
    using ember::KvType;
    const std::int64_t hd = 64, n_q = 7, stride = 8 * hd, n_keys = 40;
    for (const bool windows : {false, true}) {
        const std::vector<std::int64_t> n_pos = {37, 1, 38, 16, 17, 5, 40};
        const std::vector<std::int64_t> start =
            windows ? std::vector<std::int64_t>{3, 0, 2, 20, 23, 33, 0} : std::vector<std::int64_t>(n_pos.size(), 0);
        const std::int64_t n_rows = static_cast<std::int64_t>(n_pos.size());
        const auto q = random_floats(static_cast<std::size_t>(n_rows * stride), 31, 0.5f);
        for (const KvType type : {KvType::f32, KvType::f16, KvType::q8_0}) {
            const KvRows kv(type, hd, n_keys, 16);
            for (Isa isa : kernel_test::available_isas()) {
                INFO(std::string(isa_name(isa)) + " " + ember::model::kv_type_name(type) + (windows ? " windows" : ""));
                const AttendFn attend = float_kernels(isa).attend(type);
                std::vector<float> block(static_cast<std::size_t>(n_rows * stride), -7.0f), alone = block;
                std::vector<float> scratch(static_cast<std::size_t>(attend_scratch_floats(n_rows * n_q, n_keys, hd)));
                const AttendQueries queries{q.data(), block.data(), n_rows, n_q, stride, n_pos.data(), start.data()};
                attend(queries, hd, kv.runs.data(), kv.n_runs(), 0.125f, 0.0f, scratch.data());
                for (std::int64_t r = 0; r < n_rows; ++r) {
                    const std::size_t ri = static_cast<std::size_t>(r);
                    REQUIRE(start[ri] + n_pos[ri] <= n_keys);
                    const std::vector<KvRun> own = runs_from(kv.runs, start[ri]);
                    attend_row(attend, q.data() + r * stride, n_q, hd, own.data(), static_cast<std::int64_t>(own.size()),
                               n_pos[ri], 0.125f, 0.0f, alone.data() + r * stride, scratch.data());
                }
                REQUIRE(block == alone);  // the gaps between rows' heads are left alone too
                for (std::int64_t r = 0; r < n_rows; ++r) {  // and one head at a time
                    const std::size_t ri = static_cast<std::size_t>(r);
                    const std::vector<KvRun> own = runs_from(kv.runs, start[ri]);
                    for (std::int64_t j = 0; j < n_q; ++j) {
                        attend_row(attend, q.data() + r * stride + j * hd, 1, hd, own.data(),
                                   static_cast<std::int64_t>(own.size()), n_pos[ri], 0.125f, 0.0f,
                                   alone.data() + r * stride + j * hd, scratch.data());
                    }
                }
                REQUIRE(block == alone);
                std::vector<float> ref(block.size(), -7.0f);
                float_kernels(Isa::scalar).attend(type)({q.data(), ref.data(), n_rows, n_q, stride, n_pos.data(), start.data()},
                                                        hd, kv.runs.data(), kv.n_runs(), 0.125f, 0.0f,
                                                        scratch.data());
                for (std::size_t i = 0; i < ref.size(); ++i) REQUIRE(std::fabs(block[i] - ref[i]) <= 2e-6);
            }
        }
    }
}

TEST_CASE("scalar attention equals softmax attention in double precision", "[float_ops][attention]") {
    for (const ember::KvType type : {ember::KvType::f32, ember::KvType::f16, ember::KvType::q8_0}) {
        INFO(ember::model::kv_type_name(type));
        const std::int64_t hd = 32, n_pos = 9, n_q = 2;
        const auto q = random_floats(n_q * hd, 21);
        const KvRows kv(type, hd, n_pos, 4);
        const auto k = kv.stored(true), v = kv.stored(false);  // the values as the cache holds them
        std::vector<float> out(n_q * hd), scores(attend_scratch_floats(n_q, n_pos, hd));
        attend_row(float_kernels(Isa::scalar).attend(type), q.data(), n_q, hd, kv.runs.data(), kv.n_runs(), n_pos, 0.25f,
                                                0.0f, out.data(), scores.data());
        for (std::int64_t j = 0; j < n_q; ++j) {
            std::vector<double> p(n_pos);
            double mx = -1e300, sum = 0;
            for (std::int64_t t = 0; t < n_pos; ++t) {
                double d = 0;
                for (std::int64_t i = 0; i < hd; ++i) d += static_cast<double>(q[j * hd + i]) * k[t * hd + i];
                p[t] = d * 0.25;
                mx = std::max(mx, p[t]);
            }
            for (auto& e : p) sum += (e = std::exp(e - mx));
            for (std::int64_t i = 0; i < hd; ++i) {
                double o = 0;
                for (std::int64_t t = 0; t < n_pos; ++t) o += p[t] / sum * v[t * hd + i];
                REQUIRE(std::fabs(out[j * hd + i] - o) <= 1e-6);
            }
        }
    }
}

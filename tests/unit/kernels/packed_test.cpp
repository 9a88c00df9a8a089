// Repacked 16-row layouts (kernels/packed.hpp): every ISA's packed kernel is bit-identical to the
// scalar packed twin, and packed matmul agrees with the row-major path; the vectorized activation
// quantizers give the scalar bytes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_test_util.hpp"
#include "kernels/kquant.hpp"
#include "kernels/matmul.hpp"
#include "kernels/packed.hpp"
#include "kernels/quants.hpp"

using namespace ember;
using namespace ember::kernels;
using kernel_test::available_isas;
using kernel_test::random_floats;

namespace {

struct Weights {
    std::vector<std::uint8_t> storage;
    gguf::TensorInfo info;
};

Weights make_weights(TensorType t, std::int64_t n_rows, std::int64_t n, std::uint32_t seed) {
    Weights w;
    const auto tr = tensor_type_traits(static_cast<std::uint32_t>(t));
    const auto stride = static_cast<std::size_t>(n / tr->block_size * tr->block_bytes);
    w.storage.assign(stride * static_cast<std::size_t>(n_rows) + 4, 0);
    const auto f = random_floats(static_cast<std::size_t>(n_rows * n), seed);
    for (std::int64_t r = 0; r < n_rows; ++r) {
        std::uint8_t* dst = w.storage.data() + 4 + static_cast<std::size_t>(r) * stride;
        if (t == TensorType::Q4_K) {
            std::vector<BlockQ4K> blocks(static_cast<std::size_t>(n / kQK_K));
            quantize_row_q4_k(f.data() + r * n, blocks.data(), n);
            std::memcpy(dst, blocks.data(), stride);
        } else {
            quantize_row(t, f.data() + r * n, dst, n);
        }
    }
    // unaligned for SIMD loads, element-aligned like GGUF data
    w.info = gguf::TensorInfo::matrix("packed.weight", t, n, n_rows, w.storage.data() + 4,
                                      stride * static_cast<std::size_t>(n_rows));
    return w;
}

// Sets every weight of a row-major tensor of `t` to an extreme: the largest quant (and 6-bit
// scale or min) for Q4_0 and the K-quants, -128 and +-127 for Q8_0.
void make_extreme(TensorType t, std::uint8_t* data, std::int64_t n_blocks) {
    for (std::int64_t b = 0; b < n_blocks; ++b) {
        if (t == TensorType::Q4_0) {
            auto* blk = reinterpret_cast<BlockQ4_0*>(data) + b;
            std::memset(blk->qs, 0xff, sizeof blk->qs);
        } else if (t == TensorType::Q8_0) {
            auto* blk = reinterpret_cast<BlockQ8_0*>(data) + b;
            for (int i = 0; i < kQK; ++i) blk->qs[i] = static_cast<std::int8_t>((b + i) % 3 == 0 ? -128 : (i % 2 ? 127 : -127));
        } else if (t == TensorType::Q4_K) {
            auto* blk = reinterpret_cast<BlockQ4K*>(data) + b;
            std::memset(blk->scales, 0xff, sizeof blk->scales);
            std::memset(blk->qs, 0xff, sizeof blk->qs);
        } else if (t == TensorType::Q5_K) {
            auto* blk = reinterpret_cast<BlockQ5K*>(data) + b;
            std::memset(blk->scales, 0xff, sizeof blk->scales);
            std::memset(blk->qh, 0xff, sizeof blk->qh);
            std::memset(blk->qs, 0xff, sizeof blk->qs);
        } else {
            auto* blk = reinterpret_cast<BlockQ6K*>(data) + b;
            std::memset(blk->ql, 0xff, sizeof blk->ql);
            std::memset(blk->qh, 0xff, sizeof blk->qh);
            for (int j = 0; j < kQK_K / 16; ++j) blk->scales[j] = static_cast<std::int8_t>(j % 2 ? 127 : -128);
        }
    }
}

}  // namespace

TEST_CASE("packed layouts: every ISA bit-identical to scalar, close to the row-major path", "[packed][isa]") {
    for (TensorType t : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
        const bool kq = tensor_type_traits(static_cast<std::uint32_t>(t))->block_size == kQK_K;
        // The calls of decode and of small batches (one thread): 40 rows, a pair and one group;
        // 100, 7 groups with a partial last one: pairs three groups apart (spread_group_calls:
        // AVX-512 K-quant decode, AVX-512 tiles of up to 3-4 tokens) and the last, AVX-512
        // Q4_0/Q8_0 decode 4 + 2 + 1 neighbours; 200, 13 groups: AVX-512 Q8_0 decode's four
        // groups three apart and the last.
        for (std::int64_t n_rows : {1, 15, 16, 17, 40, 100, 200}) {
            for (std::int64_t n : {kq ? 256 : 32, kq ? 512 : 64, kq ? 768 : 160}) {
                const Weights wt = make_weights(t, n_rows, n, static_cast<std::uint32_t>(n_rows * 7 + n));
                const WeightMatrix packed = WeightMatrix::prepare(wt.info, Packing::always);
                const WeightMatrix plain = WeightMatrix::prepare(wt.info, Packing::never);
                REQUIRE(packed.packed());
                REQUIRE_FALSE(plain.packed());
                // 65: a lone last token after full blocks (32 on AVX-512, 64 on AVX2), a one-token tile.
                for (std::int64_t n_tok : {1, 2, 3, 4, 5, 7, 8, 9, 16, 65, 70}) {  // every tile width and split
                    if (n_rows >= 100 && (n_tok > 5 || n > (kq ? 256 : 32))) continue;  // the calls' groups only
                    const auto x = random_floats(static_cast<std::size_t>(n_tok * n), 99 + static_cast<std::uint32_t>(n_tok));
                    const std::int64_t ldy = n_rows + 5;
                    std::vector<std::byte> scratch(std::max(matmul_scratch_bytes(packed, n_tok),
                                                            matmul_scratch_bytes(plain, n_tok)));
                    std::vector<float> want(static_cast<std::size_t>(n_tok * ldy), -3.0f);
                    std::vector<float> ref(want.size(), -3.0f);
                    matmul(packed, x.data(), n_tok, want.data(), ldy, scratch, 1, Isa::scalar);
                    matmul(plain, x.data(), n_tok, ref.data(), ldy, scratch, 1, Isa::scalar);
                    for (std::int64_t tk = 0; tk < n_tok; ++tk) {
                        for (std::int64_t r = 0; r < ldy; ++r) {
                            const auto i = static_cast<std::size_t>(tk * ldy + r);
                            if (r >= n_rows) {
                                REQUIRE(want[i] == -3.0f);
                                continue;
                            }
                            // Same integer block sums, other float order: relative to |y| + n.
                            REQUIRE(std::fabs(want[i] - ref[i]) <= 1e-5 * (std::fabs(ref[i]) + static_cast<double>(n)));
                        }
                    }
                    const auto isas = kernel_test::isas_with_own(t, [](const TypeKernels& a, const TypeKernels& b) {
                        return a.packed_gemm == b.packed_gemm;
                    });
                    for (Isa isa : isas) {
                        for (int threads : {1, 3}) {
                            INFO(std::string(isa_name(isa)) + " " + std::string(tensor_type_name(t)) +
                                 " rows=" + std::to_string(n_rows) + " n=" + std::to_string(n) +
                                 " tokens=" + std::to_string(n_tok) + " threads=" + std::to_string(threads));
                            std::vector<float> y(want.size(), -3.0f);
                            matmul(packed, x.data(), n_tok, y.data(), ldy, scratch, threads, isa);
                            REQUIRE(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)) == 0);
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("packed layouts at the extreme weights and activations: every ISA as scalar", "[packed][isa]") {
    // AVX2 adds vpmaddubsw's int16 pair sums before widening them: with the largest weights
    // against activations of +-127 they must stay within int16 (Q8_0: |w| up to 128 times
    // a * sign(w)).
    for (TensorType t : {TensorType::Q4_0, TensorType::Q8_0, TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K}) {
        const auto tr = tensor_type_traits(static_cast<std::uint32_t>(t));
        const std::int64_t n_rows = 17, n = 2 * tr->block_size;
        Weights wt = make_weights(t, n_rows, n, 5);
        make_extreme(t, wt.storage.data() + 4, n_rows * n / tr->block_size);
        const WeightMatrix packed = WeightMatrix::prepare(wt.info, Packing::always);
        REQUIRE(packed.packed());
        for (std::int64_t n_tok : {1, 3, 8}) {
            for (float sign : {1.0f, -1.0f}) {
                std::vector<float> x(static_cast<std::size_t>(n_tok * n));  // quantized to +-127
                for (std::size_t i = 0; i < x.size(); ++i) x[i] = t == TensorType::Q8_0 && i % 2 ? -sign : sign;
                std::vector<std::byte> scratch(matmul_scratch_bytes(packed, n_tok));
                std::vector<float> want(static_cast<std::size_t>(n_tok * n_rows));
                matmul(packed, x.data(), n_tok, want.data(), n_rows, scratch, 1, Isa::scalar);
                for (Isa isa : available_isas()) {
                    INFO(std::string(isa_name(isa)) + " " + std::string(tensor_type_name(t)) + " tokens=" +
                         std::to_string(n_tok) + " sign=" + std::to_string(sign));
                    std::vector<float> y(want.size());
                    matmul(packed, x.data(), n_tok, y.data(), n_rows, scratch, 1, isa);
                    REQUIRE(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)) == 0);
                }
            }
        }
    }
}

TEST_CASE("packers: the register path (16-byte aligned destination) writes the portable path's bytes",
          "[packed][pack]") {
    // pack_group assembles blocks in SIMD registers where the destination allows 16-byte streaming
    // stores, and in a local buffer otherwise (and on other CPUs): both must give the same layout.
    const std::vector<std::pair<TensorType, const PackedLayout*>> layouts = {
        {TensorType::Q4_0, &kPackedQ4_0}, {TensorType::Q8_0, &kPackedQ8_0}, {TensorType::Q4_K, &kPackedQ4_K},
        {TensorType::Q5_K, &kPackedQ5_K}, {TensorType::Q6_K, &kPackedQ6_K}};
    for (const auto& [t, layout] : layouts) {
        const std::int64_t n = tensor_type_traits(static_cast<std::uint32_t>(t))->block_size == kQK_K ? 768 : 160;
        const Weights wt = make_weights(t, 16, n, 5);
        const std::size_t stride = wt.info.n_bytes / 16;
        const std::size_t bytes = layout->group_bytes(n);
        for (std::int64_t rows : {1, 3, 4, 15, 16}) {
            std::vector<std::uint8_t> buf(2 * bytes + 128, 0xee);
            std::uint8_t* aligned = buf.data() + (64 - reinterpret_cast<std::uintptr_t>(buf.data()) % 64);
            std::uint8_t* unaligned = aligned + bytes + 4;
            std::fill(aligned, aligned + bytes, 0);  // the packers write blocks, not the padding
            std::fill(unaligned, unaligned + bytes, 0);
            layout->pack_group(wt.info.data, stride, rows, n, aligned);
            layout->pack_group(wt.info.data, stride, rows, n, unaligned);
            INFO(tensor_type_name(t) << ", " << rows << " rows");
            REQUIRE(std::memcmp(aligned, unaligned, bytes) == 0);
            CHECK(std::count(aligned, aligned + bytes, 0) < static_cast<std::ptrdiff_t>(bytes));
        }
    }
}

TEST_CASE("packed group bytes equal the row-major bytes plus padding", "[packed]") {
    const PackedLayout* q4 = type_kernels(TensorType::Q4_0, Isa::scalar)->packed;
    const PackedLayout* q8 = type_kernels(TensorType::Q8_0, Isa::scalar)->packed;
    const PackedLayout* q4k = type_kernels(TensorType::Q4_K, Isa::scalar)->packed;
    REQUIRE(q4 != nullptr);
    REQUIRE(q8 != nullptr);
    REQUIRE(q4k != nullptr);
    CHECK(type_kernels(TensorType::Q4_1, Isa::scalar)->packed == nullptr);
    CHECK(q4k->group_bytes(2048) == 8 * 16 * (sizeof(BlockQ4K) + 4));
    const PackedLayout* q6k = type_kernels(TensorType::Q6_K, Isa::scalar)->packed;
    REQUIRE(q6k != nullptr);
    CHECK(q6k->group_bytes(2048) == 8 * (16 * sizeof(BlockQ6K) + 32));
    const PackedLayout* q5k = type_kernels(TensorType::Q5_K, Isa::scalar)->packed;
    REQUIRE(q5k != nullptr);
    CHECK(q5k->group_bytes(2048) == 8 * 16 * (sizeof(BlockQ5K) + 4));
    CHECK(q4->group_bytes(2048) == 16 * 64 * sizeof(BlockQ4_0));
    CHECK(q8->group_bytes(2048) == 16 * 64 * sizeof(BlockQ8_0));
    CHECK(q4->group_bytes(32) % 64 == 0);
}

TEST_CASE("activation quantizers give the scalar bytes on every ISA", "[packed][quantize_act]") {
    std::vector<float> x = random_floats(32 * 40, 5, 3.0f);
    for (int j = 0; j < 32; ++j) x[static_cast<std::size_t>(32 + j)] = 0.0f;          // all-zero block
    for (int j = 0; j < 32; ++j) x[static_cast<std::size_t>(64 + j)] = static_cast<float>(j - 16) + 0.5f;  // ties:
    x[64] = 127.0f;                                                               // id = 1
    x[96] = 1e-30f;                                                               // tiny scale
    x[128] = -4.0f;
    for (TensorType t : {TensorType::Q4_0, TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0}) {
        const TypeKernels& ks = *type_kernels(t, Isa::scalar);
        const auto tr = tensor_type_traits(static_cast<std::uint32_t>(ks.act_type));
        for (std::int64_t nb : {0, 1, 3, 40}) {
            const auto bytes = static_cast<std::size_t>(nb * tr->block_bytes);
            std::vector<std::uint8_t> want(bytes + 4), got(bytes + 4);
            ks.quantize_act(x.data(), want.data(), nb * 32);
            for (Isa isa : available_isas()) {
                INFO(std::string(isa_name(isa)) + " " + std::string(tensor_type_name(t)) + " blocks=" + std::to_string(nb));
                std::fill(got.begin(), got.end(), std::uint8_t{0xAA});
                type_kernels(t, isa)->quantize_act(x.data(), got.data() + 4, nb * 32);  // SIMD-unaligned
                REQUIRE(std::memcmp(got.data() + 4, want.data(), bytes) == 0);
            }
        }
    }
}

TEST_CASE("matmul_many runs matrices of several types as one product", "[packed][matmul_many]") {
    // Q4_K_M's q/k/v: Q4_K, Q4_K and, in some layers, Q6_K; Q4_0 beside Q8_0 share Q8_0 activations.
    const std::vector<std::vector<TensorType>> mixes = {{TensorType::Q4_K, TensorType::Q4_K, TensorType::Q6_K},
                                                        {TensorType::Q6_K, TensorType::Q5_K, TensorType::Q4_K},
                                                        {TensorType::Q4_0, TensorType::Q8_0}};
    const std::int64_t rows[] = {40, 7, 33};
    for (const auto& mix : mixes) {
        const std::int64_t n = 512;
        std::vector<Weights> ws;
        std::vector<WeightMatrix> wm;
        for (std::size_t j = 0; j < mix.size(); ++j) ws.push_back(make_weights(mix[j], rows[j], n, static_cast<std::uint32_t>(j + 1)));
        for (std::size_t j = 0; j < mix.size(); ++j) wm.push_back(WeightMatrix::prepare(ws[j].info, Packing::always));
        std::vector<const WeightMatrix*> ptrs;
        for (const auto& w : wm) ptrs.push_back(&w);
        for (std::int64_t n_tok : {1, 5, 70}) {
            std::size_t one = 0;  // what matmul() of each needs
            for (const auto& w : wm) one = std::max(one, matmul_scratch_bytes(w, n_tok));
            const std::size_t all = matmul_many_scratch_bytes(ptrs, n_tok);
            CHECK(all > one);  // each type's activations
            for (std::size_t bytes : {all, one}) {  // one product; one product a matrix
                for (int threads : {1, 2, 3}) {
                    INFO(std::string(tensor_type_name(mix[0])) + "+" + std::string(tensor_type_name(mix.back())) +
                         " tokens=" + std::to_string(n_tok) + " threads=" + std::to_string(threads) +
                         " scratch=" + std::to_string(bytes));
                    const auto x = random_floats(static_cast<std::size_t>(n_tok * n), 9);
                    std::vector<std::byte> scratch(bytes);
                    std::vector<std::vector<float>> y, want;
                    std::vector<MatmulJob> jobs;
                    for (std::size_t j = 0; j < mix.size(); ++j) {
                        y.emplace_back(static_cast<std::size_t>(n_tok * rows[j]), -1.0f);
                        want.emplace_back(static_cast<std::size_t>(n_tok * rows[j]));
                    }
                    for (std::size_t j = 0; j < mix.size(); ++j) jobs.push_back({&wm[j], y[j].data(), rows[j]});
                    matmul_many(jobs, x.data(), n_tok, scratch, threads);
                    std::vector<std::byte> own(all);
                    for (std::size_t j = 0; j < mix.size(); ++j) {
                        matmul(wm[j], x.data(), n_tok, want[j].data(), rows[j], own, 1);
                        REQUIRE(y[j] == want[j]);
                    }
                }
            }
        }
    }
}

TEST_CASE("matmul_many equals one matmul per matrix", "[packed][matmul_many]") {
    for (TensorType t : {TensorType::Q4_0, TensorType::Q4_K}) {
        const std::int64_t n = t == TensorType::Q4_K ? 512 : 96;
        const Weights a = make_weights(t, 40, n, 1), b = make_weights(t, 7, n, 2), c = make_weights(t, 33, n, 3);
        for (Packing p : {Packing::always, Packing::never}) {
            const WeightMatrix wa = WeightMatrix::prepare(a.info, p), wb = WeightMatrix::prepare(b.info, p),
                               wc = WeightMatrix::prepare(c.info, p);
            for (std::int64_t n_tok : {1, 5, 70}) {
                for (int threads : {1, 2, 3}) {
                    INFO(std::string(tensor_type_name(t)) + " tokens=" + std::to_string(n_tok) + " threads=" + std::to_string(threads));
                    const auto x = random_floats(static_cast<std::size_t>(n_tok * n), 7);
                    std::vector<std::byte> scratch(matmul_scratch_bytes(wa, n_tok));
                    std::vector<float> ya(static_cast<std::size_t>(n_tok * 40)), yb(static_cast<std::size_t>(n_tok * 7)),
                        yc(static_cast<std::size_t>(n_tok * 33));
                    auto ra = ya, rb = yb, rc = yc;
                    const MatmulJob jobs[] = {{&wa, ya.data(), 40}, {&wb, yb.data(), 7}, {&wc, yc.data(), 33}};
                    matmul_many(jobs, x.data(), n_tok, scratch, threads);
                    matmul(wa, x.data(), n_tok, ra.data(), 40, scratch, 1);
                    matmul(wb, x.data(), n_tok, rb.data(), 7, scratch, 1);
                    matmul(wc, x.data(), n_tok, rc.data(), 33, scratch, 1);
                    REQUIRE(ya == ra);
                    REQUIRE(yb == rb);
                    REQUIRE(yc == rc);
                }
            }
        }
    }
}

// Register-resident arithmetic loops that measure a core's peak throughput, the ceiling that
// prefill speed is compared against (ember-bench). Each loop runs `iters` iterations over
// independent accumulator chains (enough to cover the instruction latency) and returns the
// number of operations done, a multiply and an add counted as two. The result of the
// accumulators is stored to *sink so the work cannot be optimised away.
//
// Plain declarations only: per-ISA translation units include this header.
#pragma once

#include <cstdint>

namespace ember::kernels {

/// int8 x int8 -> int32 multiply-accumulate peaks.
std::int64_t peak_int8_scalar(std::int64_t iters, std::int32_t* sink) noexcept;
/// AVX2 without VNNI: vpmaddubsw + vpmaddwd + vpaddd, 32 byte pairs per 3 instructions.
std::int64_t peak_int8_avx2(std::int64_t iters, std::int32_t* sink) noexcept;
/// AVX-VNNI: vpdpbusd on ymm (32 byte pairs per instruction). Needs AVX-VNNI.
std::int64_t peak_int8_avx2_vnni(std::int64_t iters, std::int32_t* sink) noexcept;
/// AVX-512 VNNI: vpdpbusd on zmm (64 byte pairs per instruction).
std::int64_t peak_int8_avx512(std::int64_t iters, std::int32_t* sink) noexcept;

/// f32 fused multiply-add peaks.
std::int64_t peak_f32_scalar(std::int64_t iters, float* sink) noexcept;
std::int64_t peak_f32_avx2(std::int64_t iters, float* sink) noexcept;     ///< vfmadd ymm
std::int64_t peak_f32_avx512(std::int64_t iters, float* sink) noexcept;   ///< vfmadd zmm

/// bf16 pair dot into f32 (what BF16 weights run on where the CPU has it): vdpbf16ps zmm, 32
/// multiply-adds per instruction. Needs AVX512_BF16.
std::int64_t peak_bf16_avx512(std::int64_t iters, float* sink) noexcept;

}  // namespace ember::kernels

#include "common/quant_mix.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <numeric>

#include "kernels/kquant.hpp"
#include "kernels/matmul.hpp"
#include "kernels/quants.hpp"
#include "runtime/fail.hpp"

namespace ember::tools {
namespace {

// LLAMA_FTYPE values (llama.h).
constexpr FileType kFileTypes[] = {
    {"F32", 0, TensorType::F32},       {"F16", 1, TensorType::F16},
    {"BF16", 32, TensorType::BF16},    {"Q4_0", 2, TensorType::Q4_0},
    {"Q4_1", 3, TensorType::Q4_1},     {"Q5_0", 8, TensorType::Q5_0},
    {"Q5_1", 9, TensorType::Q5_1},     {"Q8_0", 7, TensorType::Q8_0},
    {"Q4_K_S", 14, TensorType::Q4_K},  {"Q4_K_M", 15, TensorType::Q4_K},
    {"Q5_K_S", 16, TensorType::Q5_K},  {"Q5_K_M", 17, TensorType::Q5_K},
    {"Q6_K", 18, TensorType::Q6_K},
};

constexpr std::int64_t kQK_K = 256;

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) {
            return false;
        }
    }
    return true;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_quantized(TensorType t) {
    return t != TensorType::F32 && t != TensorType::F16 && t != TensorType::BF16;
}

std::int64_t block_size(TensorType t) {
    return tensor_type_traits(static_cast<std::uint32_t>(t))->block_size;
}

bool use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

int block_index(std::string_view name) {
    if (name.rfind("blk.", 0) != 0) return -1;
    int v = 0;
    const auto r = std::from_chars(name.data() + 4, name.data() + name.size(), v);
    return r.ec == std::errc() ? v : -1;
}

}  // namespace

const FileType* find_file_type(std::string_view name) noexcept {
    for (const FileType& f : kFileTypes) {
        if (iequals(f.name, name)) return &f;
    }
    return nullptr;
}

std::string file_type_names() {
    std::string s;
    for (const FileType& f : kFileTypes) {
        if (!s.empty()) s += ", ";
        s += f.name;
    }
    return s;
}

bool is_quantizable(std::string_view name, std::uint32_t n_dims) {
    const bool weight = name.size() >= 6 && name.substr(name.size() - 6) == "weight";
    return weight && n_dims >= 2 && !contains(name, "_norm.weight") && !contains(name, "ffn_gate_inp.weight");
}

TypeChooser::TypeChooser(const FileType& type, int n_layer, int n_attn_v, bool has_output)
    : type_(type), n_layer_(n_layer), n_attn_v_(n_attn_v), has_output_(has_output) {}

TensorType TypeChooser::with_fallback(TensorType t, std::int64_t ne0) {
    if (ne0 % block_size(t) == 0) return t;
    ++n_fallback_;
    TensorType f = TensorType::F16;
    switch (t) {
        case TensorType::Q4_K: f = TensorType::Q5_0; break;
        case TensorType::Q5_K: f = TensorType::Q5_1; break;
        case TensorType::Q6_K: f = TensorType::Q8_0; break;
        default: break;  // legacy types: F16 (what the llama.cpp-made reference files hold)
    }
    return ne0 % block_size(f) == 0 ? f : TensorType::F16;
}

TensorType TypeChooser::choose(std::string_view name, std::int64_t ne0) {
    TensorType t = type_.base;
    if (!is_quantized(t)) return t;  // F32/F16/BF16 targets: no mixture
    const std::uint32_t ft = type_.ftype;
    const bool q4_k_m = ft == 15, q5_k_m = ft == 17, q4_k_s = ft == 14;
    if (name == "output.weight" || (!has_output_ && name == "token_embd.weight")) {
        // llama.cpp tests the row against QK_K (the versions that made the reference files).
        if (ne0 % kQK_K != 0) {
            t = TensorType::Q8_0;
        } else if (t != TensorType::Q8_0) {
            t = TensorType::Q6_K;
        }
    } else if (name == "token_embd.weight") {
        // the base type
    } else if (contains(name, "attn_v.weight")) {
        if ((q4_k_m || q5_k_m) && use_more_bits(i_attn_v_, n_attn_v_)) {
            t = TensorType::Q6_K;
        } else if (q4_k_s && i_attn_v_ < 4) {
            t = TensorType::Q5_K;
        }
        ++i_attn_v_;
    } else if (contains(name, "ffn_down")) {
        const int i_layer = i_ffn_down_, n_layer = n_layer_;
        if (q4_k_m || q5_k_m) {
            if (use_more_bits(i_layer, n_layer)) t = TensorType::Q6_K;
        } else if (q4_k_s && i_layer < n_layer / 8) {
            t = TensorType::Q5_K;
        }
        ++i_ffn_down_;
    } else if (contains(name, "attn_qkv.weight")) {  // fused q/k/v (phi3)
        if (q4_k_m) {
            t = TensorType::Q5_K;
        } else if (q5_k_m) {
            t = TensorType::Q6_K;
        }
    }
    return with_fallback(t, ne0);
}

std::vector<std::size_t> llama_tensor_order(const std::vector<std::string>& names) {
    std::vector<std::size_t> order(names.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const int la = block_index(names[a]), lb = block_index(names[b]);
        if (la != lb) return la < lb;
        return names[a] < names[b];
    });
    return order;
}

std::uint64_t row_bytes(TensorType type, std::int64_t n) {
    const auto tr = tensor_type_traits(static_cast<std::uint32_t>(type));
    if (!tr || n % tr->block_size != 0) {
        fail("row of " + std::to_string(n) + " values cannot be stored as " + std::string(tensor_type_name(type)));
    }
    return static_cast<std::uint64_t>(n / tr->block_size * tr->block_bytes);
}

bool can_write(TensorType type) noexcept {
    switch (type) {
        case TensorType::F32: case TensorType::F16: case TensorType::BF16:
        case TensorType::Q4_0: case TensorType::Q4_1: case TensorType::Q5_0: case TensorType::Q5_1:
        case TensorType::Q8_0: case TensorType::Q4_K: case TensorType::Q5_K: case TensorType::Q6_K:
            return true;
        default:
            return false;
    }
}

void quantize_rows(TensorType type, const float* x, void* dst, std::int64_t n_rows, std::int64_t n_cols) {
    const std::uint64_t rb = row_bytes(type, n_cols);
    auto* out = static_cast<std::uint8_t*>(dst);
    for (std::int64_t r = 0; r < n_rows; ++r) {
        const float* xr = x + r * n_cols;
        void* yr = out + static_cast<std::uint64_t>(r) * rb;
        switch (type) {
            case TensorType::Q4_K: kernels::quantize_row_q4_k(xr, static_cast<kernels::BlockQ4K*>(yr), n_cols); break;
            case TensorType::Q5_K: kernels::quantize_row_q5_k(xr, static_cast<kernels::BlockQ5K*>(yr), n_cols); break;
            case TensorType::Q6_K: kernels::quantize_row_q6_k(xr, static_cast<kernels::BlockQ6K*>(yr), n_cols); break;
            default: kernels::quantize_row(type, xr, yr, n_cols); break;
        }
    }
}

void dequantize_rows(const gguf::TensorInfo& t, std::int64_t row0, std::int64_t n_rows, float* dst) {
    for (std::int64_t r = 0; r < n_rows; ++r) kernels::dequantize_row(t, row0 + r, dst + r * t.ne[0]);
}

}  // namespace ember::tools
